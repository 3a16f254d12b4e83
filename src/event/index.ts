// Types only: the zod schemas stay in ./schema, so importing src/event does not load zod.
export type * from "./schema";
export { RECORD_TYPES, WATCH_TYPES } from "./enums";
export { streamIdOf, parseStreamId } from "./stream-id";
export { eventIdFor, recordIdFor, objectHash, canonicalJson } from "./ids";
export type { LiveEventIdInput, BaselineEventIdInput } from "./ids";
export {
  GLOBAL_STREAM_ID,
  resourceRefOf,
  eventRecord,
  baselineRecords,
  gapRecord,
  coverageRecord,
  checkpointRecord,
  snapshotRecord,
  auditCorrelationRecord,
} from "./records";
export type {
  EventInput,
  BaselineInput,
  GapInput,
  CoverageInput,
  CheckpointInput,
} from "./records";
export { MANIFEST_COPY_ANNOTATIONS } from "./redaction";
