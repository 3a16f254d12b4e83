export * from "./types";
export { openJournal, DEFAULTS as JOURNAL_DEFAULTS } from "./journal";
export { SCHEMA_VERSION } from "./store/schema";
export { redactObject, digestValue, REDACTED_PREFIX, type RedactPolicy } from "./write/redact";
export type { GapWindow } from "./read/object-at";
