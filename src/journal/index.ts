export * from "./types";
export { openJournal, DEFAULTS as JOURNAL_DEFAULTS } from "./journal";
export { SCHEMA_VERSION } from "./schema-sql";
export { redactObject, digestValue, REDACTED_PREFIX, type RedactPolicy } from "./redact";
export type { GapWindow } from "./object-at";
