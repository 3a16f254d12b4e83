// The audit package's front door: audit log and webhook ingestion, and correlation with the journal.
export {
  AuditIngestor,
  INGEST_DEFAULTS,
  type AuditIngestOptions,
  type WebhookResult,
} from "./ingest";
export {
  Correlator,
  CORRELATOR_DEFAULTS,
  type AuditCounts,
  type CorrelatorOptions,
} from "./correlate";
export {
  parseAuditLine,
  parseAuditEvent,
  factsOf,
  type AuditFacts,
  type ParsedLine,
} from "./facts";
export { AuditEventSchema, AuditEventListSchema, type AuditEvent } from "./schema";
export { LogFollower, type FollowOptions, type FollowStats } from "./follow";
export { AuditMetrics, AUDIT_RESULTS, type AuditResult } from "./metrics";
