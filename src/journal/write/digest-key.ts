// The key that salts redaction digests. It never sits in the journal file: whoever holds the file
// could otherwise recompute digests of guessed values (a short password, a four-digit PIN) and match
// them. In the cluster it comes from a Secret the chart creates once and mounts; elsewhere it is a
// file beside the journal, created once with mode 0600.
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import type Database from "better-sqlite3";
import { logger } from "../../log/logger";
import { JournalError } from "../types";

const log = logger("journal.redact");
const MIN_KEY_BYTES = 16;

/** Where the key lives when no key file is configured. */
export const defaultKeyFile = (journalPath: string): string => `${journalPath}-digest.key`;

function readKey(file: string): string {
  const key = readFileSync(file, "utf8").trim();
  if (Buffer.byteLength(key) < MIN_KEY_BYTES) {
    throw new JournalError(
      `digest key file ${file} holds fewer than ${MIN_KEY_BYTES} bytes`,
      "INVALID",
    );
  }
  return key;
}

/**
 * The digest key for this journal. A configured file must exist. Without one, the default file is
 * used and created when missing; a key an older krply kept in the journal moves into it, so digests
 * stay comparable, and leaves the journal.
 */
export function loadDigestKey(
  db: Database.Database,
  journalPath: string,
  keyFile: string | undefined,
): string {
  const legacy = db.prepare("SELECT value FROM meta WHERE key='redact_salt'").get() as
    | { value: string }
    | undefined;
  let key: string;
  if (keyFile !== undefined) {
    if (!existsSync(keyFile)) {
      throw new JournalError(
        `digest key file ${keyFile} does not exist (in the cluster it is the chart's digest-key Secret)`,
        "INVALID",
      );
    }
    key = readKey(keyFile);
  } else {
    const file = defaultKeyFile(journalPath);
    if (existsSync(file)) {
      key = readKey(file);
    } else {
      key = legacy?.value ?? randomBytes(32).toString("hex");
      // "wx": two writers racing to create it keep the first key, never overwrite it.
      writeFileSync(file, key + "\n", { mode: 0o600, flag: "wx" });
      log.info({ file }, "created the redaction digest key");
    }
  }
  if (legacy) {
    db.prepare("DELETE FROM meta WHERE key='redact_salt'").run();
    log.info("removed the digest key an older krply kept inside the journal");
  }
  return key;
}
