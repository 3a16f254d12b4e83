// The wire format's enumerations as plain tuples, so code outside validation (every journal read,
// the CLI) can list them without loading zod; ./schema builds its zod enums from the same tuples.

/** Every kind of row the journal holds. */
export const RECORD_TYPES = [
  "event",
  "baseline",
  "gap",
  "coverage_change",
  "audit_correlation",
  "snapshot",
  "checkpoint",
  "pruned",
] as const;

/** The event types of a watch stream. */
export const WATCH_TYPES = ["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"] as const;
