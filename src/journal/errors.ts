import { JournalError } from "./types";

// better-sqlite3 reports SQLite result codes by name; extended I/O codes share the SQLITE_IOERR prefix.
const DISK_FULL = new Set(["SQLITE_FULL"]);
const IO_PREFIX = "SQLITE_IOERR";

/** Maps a thrown SQLite/Node error to a typed JournalError, keeping the original as cause. */
export function toJournalError(err: unknown, what: string): JournalError {
  if (err instanceof JournalError) return err;
  const code = (err as { code?: unknown })?.code;
  const msg = err instanceof Error ? err.message : String(err);
  if (typeof code === "string") {
    if (DISK_FULL.has(code) || (code === "SQLITE_IOERR_WRITE" && /space/i.test(msg))) {
      return new JournalError(`${what}: disk full (${msg})`, "DISK_FULL", { cause: err });
    }
    if (code === "EFBIG" || code === "ENOSPC") {
      return new JournalError(`${what}: disk full (${msg})`, "DISK_FULL", { cause: err });
    }
    if (code.startsWith(IO_PREFIX))
      return new JournalError(`${what}: I/O error (${msg})`, "IO", { cause: err });
    if (code === "SQLITE_CORRUPT" || code === "SQLITE_NOTADB") {
      return new JournalError(`${what}: journal is corrupt (${msg})`, "CORRUPT", { cause: err });
    }
    // Another connection holds the file longer than busy_timeout allows to wait.
    if (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED"))
      return new JournalError(`${what}: journal is busy (${msg})`, "BUSY", { cause: err });
    if (code === "SQLITE_READONLY")
      return new JournalError(`${what}: ${msg}`, "READONLY", { cause: err });
  }
  return new JournalError(`${what}: ${msg}`, "IO", { cause: err });
}

/**
 * Whether an append failed because of what it was asked to store (a record or checkpoint the
 * journal refuses, or one its encoder cannot handle) rather than because of the file or the disk.
 * The same batch without that record would succeed, so the writer can isolate it.
 */
export function isRecordFault(err: unknown): boolean {
  if (!(err instanceof JournalError)) return false;
  if (err.code === "INVALID") return true;
  if (err.code !== "IO") return false;
  // SQLite and the OS name their failures with a string code; a plain exception came from our own
  // per-record code (encoding, redaction) on the values of one record.
  const code = (err.cause as { code?: unknown } | undefined)?.code;
  return err.cause instanceof Error && typeof code !== "string";
}
