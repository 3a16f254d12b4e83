import { CommanderError } from "commander";
import type { JournalError } from "../journal";

/**
 * Exit codes of krply. Scripts can tell "fix your command" from "nothing there" from "the journal is
 * damaged" from "the server said no". docs/cli.md lists them.
 */
export const EXIT = {
  OK: 0,
  /** Something unexpected failed. */
  FAILURE: 1,
  /** A flag, argument or input is wrong. */
  USAGE: 2,
  /** The journal, cluster, kind, object or snapshot does not exist. */
  NOT_FOUND: 3,
  /** The journal is damaged: run `krply fsck`. */
  DAMAGED: 4,
  /** The journal cannot be used now: busy, read-only, an I/O error, a newer schema, disk full. */
  UNAVAILABLE: 5,
  /** The server cannot be reached, or failed (remote mode). */
  SERVER: 6,
  /** The server did not accept the token, or the token may not do this (remote mode). */
  DENIED: 7,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** A failure the CLI explains in one line, with its exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "CliError";
  }
}

/** Bad input from the user: the message names the flag or argument. */
export const usage = (message: string): CliError => new CliError(message, EXIT.USAGE);

/** Something named does not exist. */
export const notFound = (message: string): CliError => new CliError(message, EXIT.NOT_FOUND);

// materialize words "not there" as plain errors; these are the ones a person causes by naming it.
const NOT_FOUND_TEXT = [
  /was never recorded/,
  /is not in the journal/,
  /has no recorded streams yet/,
  /^no snapshot /,
  /^unknown stream /,
];

function journalMessage(e: JournalError, journal: string | undefined): CliError {
  const where = journal ? `journal ${journal}` : "the journal";
  switch (e.code) {
    case "NOT_FOUND":
      return new CliError(
        `${where} does not exist (pass --store FILE or set KRPLY_JOURNAL)`,
        EXIT.NOT_FOUND,
      );
    case "CORRUPT": {
      // The innermost cause says what was found (SQLite's "malformed", a failed inflate).
      const detail = e.cause instanceof Error ? e.cause.message : e.message;
      return new CliError(
        `${where} is damaged (${firstLine(detail)}); run \`krply fsck${journal ? ` --store ${journal}` : ""}\` to see what`,
        EXIT.DAMAGED,
      );
    }
    case "INVALID":
      return new CliError(firstLine(e.message), EXIT.USAGE);
    default:
      return new CliError(`${where}: ${firstLine(e.message)}`, EXIT.UNAVAILABLE);
  }
}

const firstLine = (s: string): string => s.split("\n")[0];

// Recognized by shape, not instanceof: importing the journal or zod here would load them for
// `krply --help`, which needs neither.
const isJournalError = (e: unknown): e is JournalError =>
  e instanceof Error && e.name === "JournalError" && typeof (e as JournalError).code === "string";

interface ZodLike {
  issues: { path: PropertyKey[]; message: string }[];
}
const isZodError = (e: unknown): e is ZodLike =>
  e instanceof Error && e.name === "ZodError" && Array.isArray((e as unknown as ZodLike).issues);

function zodMessage(e: ZodLike): string {
  return e.issues
    .map(i => (i.path.length > 0 ? `${i.path.map(String).join(".")}: ${i.message}` : i.message))
    .join("; ");
}

/** Turns any failure into the one line a person reads and the exit code a script checks. */
export function explain(err: unknown, journal?: string): CliError {
  if (err instanceof CliError) return err;
  if (isJournalError(err)) return journalMessage(err, journal);
  if (isZodError(err)) return usage(zodMessage(err));
  if (err instanceof CommanderError) return new CliError(firstLine(err.message), EXIT.USAGE);
  // A wrapper such as "cannot open journal" keeps the journal's typed error as its cause.
  if (err instanceof Error && isJournalError(err.cause)) return journalMessage(err.cause, journal);
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof RangeError) return usage(firstLine(message));
  if (NOT_FOUND_TEXT.some(r => r.test(message))) return notFound(firstLine(message));
  if (/pass --cluster|pass a kind|pass one$|is earlier than/.test(message))
    return usage(firstLine(message));
  return new CliError(firstLine(message), EXIT.FAILURE);
}
