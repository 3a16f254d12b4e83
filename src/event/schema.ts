// The wire format of krply. src/event's index exports only the types from here: the schemas are for
// tests and validation, and building them at import would load zod into every journal read.
import { z } from "zod";
import { RECORD_TYPES, WATCH_TYPES } from "./enums";

/** Every kind of row the journal holds; the wire format of krply. */
export const RecordTypeSchema = z.enum(RECORD_TYPES);
export type RecordType = z.infer<typeof RecordTypeSchema>;

export const WatchTypeSchema = z.enum(WATCH_TYPES);
export type WatchType = z.infer<typeof WatchTypeSchema>;

/** A stream is one list/watch: order holds inside it and never across streams. */
export const StreamKeySchema = z.object({
  clusterId: z.string().min(1),
  group: z.string(), // "" for the core group
  version: z.string().min(1),
  resource: z.string().min(1), // plural, e.g. "configmaps"
  namespace: z.string(), // "" means all namespaces / cluster scoped
  selector: z.string(), // label selector, "" for none
});
export type StreamKey = z.infer<typeof StreamKeySchema>;

export const ResourceRefSchema = z.object({
  group: z.string(),
  version: z.string(),
  kind: z.string().min(1),
  namespace: z.string(), // "" when cluster scoped
  name: z.string().min(1),
  uid: z.string(),
  resourceVersion: z.string(),
});
export type ResourceRef = z.infer<typeof ResourceRefSchema>;

/** Unknown CRD fields must survive, so objects are kept as loose JSON. */
export const KubeObjectSchema = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: z.looseObject({
    name: z.string().optional(),
    namespace: z.string().optional(),
    uid: z.string().optional(),
    resourceVersion: z.string().optional(),
  }),
});
export type KubeObject = z.infer<typeof KubeObjectSchema>;

export const ProvenanceSchema = z.object({
  source: z.enum(["watch", "list", "audit", "import"]),
  listResourceVersion: z.string().optional(),
  connectionId: z.string().optional(),
});

export const GapSchema = z.object({
  lastGoodResourceVersion: z.string(), // "" when nothing was durable yet
  reason: z.string(),
  detectedAt: z.string(),
  resolvedByBaselineRv: z.string().optional(),
});

export const CoverageSchema = z.object({
  // "stopped": the recorder stopped recording the stream on purpose (selection changed, CRD deleted
  // or moved to another version, the recorder shutting down); "unavailable": the server refused it.
  state: z.enum(["available", "unavailable", "stopped"]),
  reason: z.string(),
  httpStatus: z.number().int().optional(),
  /**
   * On the record written when a stream resumes from its checkpoint after the recorder was down: its
   * last durable checkpoint (or heartbeat) time. Changes from then to this record were observed late.
   */
  downSince: z.string().optional(),
});

export const CheckpointSchema = z.object({
  resourceVersion: z.string(),
  bookmark: z.boolean(),
});

export const BaselinePayloadSchema = z.object({
  listResourceVersion: z.string(),
  objectCount: z.number().int().nonnegative(),
});

export const SnapshotPayloadSchema = z.object({
  name: z.string(),
  at: z.string(),
  complete: z.boolean(),
  watermarks: z.record(z.string(), z.string()), // streamId -> last durable RV at or before `at`
  missing: z.array(z.string()),
  warnings: z.array(z.string()),
  objectCount: z.number().int().nonnegative(),
});

export const PrunedPayloadSchema = z.object({
  before: z.string(), // history before this ISO time is gone
  removedRecords: z.number().int().nonnegative(),
  reason: z.enum(["bytes", "age"]),
});

/**
 * Who made a recorded change, from the API server's audit log. One record per audit stage of a
 * request, so a request's RequestReceived and ResponseComplete lines stay two records.
 */
export const AuditCorrelationSchema = z.object({
  auditId: z.string(),
  /** Audit stage: RequestReceived, ResponseStarted, ResponseComplete or Panic. */
  stage: z.string(),
  /** HTTP status of the response; 0 for a stage written before the response. */
  code: z.number().int(),
  user: z.string(),
  groups: z.array(z.string()).optional(),
  /** The user an impersonating caller acted as, when it impersonated. */
  impersonatedUser: z.string().optional(),
  verb: z.string(),
  userAgent: z.string().optional(),
  sourceIPs: z.array(z.string()).optional(),
  /** The audit event's stageTimestamp (API server clock). */
  stageTimestamp: z.string().optional(),
});
export type AuditCorrelation = z.infer<typeof AuditCorrelationSchema>;

export const JournalRecordSchema = z.object({
  type: RecordTypeSchema,
  eventId: z.string().min(1),
  ingestSeq: z.number().int().positive().optional(), // assigned by the journal on append
  clusterId: z.string().min(1),
  streamId: z.string().min(1),
  observedAt: z.string(), // collector clock, ISO 8601; not the time of the change
  watchType: WatchTypeSchema.optional(),
  synthetic: z.boolean(),
  resource: ResourceRefSchema.optional(),
  objectHash: z.string().optional(),
  object: KubeObjectSchema.optional(),
  provenance: ProvenanceSchema.optional(),
  gap: GapSchema.optional(),
  coverage: CoverageSchema.optional(),
  checkpoint: CheckpointSchema.optional(),
  baseline: BaselinePayloadSchema.optional(),
  snapshot: SnapshotPayloadSchema.optional(),
  pruned: PrunedPayloadSchema.optional(),
  audit: AuditCorrelationSchema.optional(),
});
export type JournalRecord = z.infer<typeof JournalRecordSchema>;
