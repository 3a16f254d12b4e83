import { eventIdFor, objectHash, recordIdFor } from "./ids";
import type { JournalRecord, KubeObject, ResourceRef, StreamKey, WatchType } from "./schema";
import { streamIdOf } from "./stream-id";
import type { z } from "zod";
import type { AuditCorrelationSchema, SnapshotPayloadSchema } from "./schema";

/** Records that belong to no single stream (snapshots, prune markers) carry this stream id. */
export const GLOBAL_STREAM_ID = "*";

type Provenance = NonNullable<JournalRecord["provenance"]>;

/** Builds the resource reference of an object seen on a stream; list items lack kind, so pass it. */
export function resourceRefOf(stream: StreamKey, object: KubeObject, kind?: string): ResourceRef {
  const k = object.kind ?? kind;
  if (!k) throw new Error(`object ${object.metadata.name ?? "?"} has no kind and none was given`);
  const name = object.metadata.name;
  if (!name) throw new Error(`${k} object without metadata.name`);
  return {
    group: stream.group,
    version: stream.version,
    kind: k,
    namespace: object.metadata.namespace ?? "",
    name,
    uid: object.metadata.uid ?? "",
    resourceVersion: object.metadata.resourceVersion ?? "",
  };
}

export interface EventInput {
  stream: StreamKey;
  watchType: Exclude<WatchType, "BOOKMARK">;
  object: KubeObject;
  observedAt: string;
  kind?: string;
  provenance?: Provenance;
}

/** Builds a live watch event record (ADDED/MODIFIED/DELETED, or ERROR with a Status object). */
export function eventRecord(input: EventInput): JournalRecord {
  const streamId = streamIdOf(input.stream);
  const provenance = input.provenance ?? { source: "watch" as const };
  // Both records are spelled out as literals: an object built as {...base, more} gets a shape on
  // which V8 looks up every property far more slowly, and the journal reads each record's fields
  // dozens of times (docs/benchmarks.md has the numbers).
  if (input.watchType === "ERROR") {
    // A Status object names no resource, so its identity is its content and time.
    const text = JSON.stringify(input.object);
    return {
      type: "event",
      eventId: recordIdFor("error", streamId, input.observedAt, text),
      clusterId: input.stream.clusterId,
      streamId,
      observedAt: input.observedAt,
      watchType: input.watchType,
      synthetic: false,
      provenance,
      object: input.object,
    };
  }
  const resource = resourceRefOf(input.stream, input.object, input.kind);
  return {
    type: "event",
    eventId: eventIdFor({
      clusterId: input.stream.clusterId,
      streamId,
      uid: resource.uid,
      resourceVersion: resource.resourceVersion,
      watchType: input.watchType,
    }),
    clusterId: input.stream.clusterId,
    streamId,
    observedAt: input.observedAt,
    watchType: input.watchType,
    synthetic: false,
    provenance,
    resource,
    objectHash: objectHash(input.object),
    object: input.object,
  };
}

export interface BaselineInput {
  stream: StreamKey;
  listResourceVersion: string;
  listedAt: string;
  objects: KubeObject[];
  /** The list's item kind (list items usually omit kind). */
  kind: string;
  connectionId?: string;
}

/** Builds one synthetic record per listed object, then a marker that says the baseline is complete. */
export function baselineRecords(input: BaselineInput): JournalRecord[] {
  const streamId = streamIdOf(input.stream);
  const provenance: Provenance = { source: "list", listResourceVersion: input.listResourceVersion };
  if (input.connectionId) provenance.connectionId = input.connectionId;
  const out: JournalRecord[] = input.objects.map(object => {
    const resource = resourceRefOf(input.stream, object, input.kind);
    return {
      type: "baseline",
      eventId: eventIdFor({
        clusterId: input.stream.clusterId,
        streamId,
        uid: resource.uid,
        resourceVersion: resource.resourceVersion,
        listedAt: input.listedAt,
        listResourceVersion: input.listResourceVersion,
      }),
      clusterId: input.stream.clusterId,
      streamId,
      observedAt: input.listedAt,
      watchType: "ADDED",
      synthetic: true,
      resource,
      objectHash: objectHash(object),
      object,
      provenance,
    };
  });
  out.push({
    type: "baseline",
    eventId: recordIdFor("baseline-marker", streamId, input.listResourceVersion, input.listedAt),
    clusterId: input.stream.clusterId,
    streamId,
    observedAt: input.listedAt,
    synthetic: true,
    provenance,
    baseline: { listResourceVersion: input.listResourceVersion, objectCount: input.objects.length },
  });
  return out;
}

export interface GapInput {
  stream: StreamKey;
  lastGoodResourceVersion: string;
  reason: string;
  detectedAt: string;
}

/** Builds a gap record: history after lastGoodResourceVersion is unknown until the next baseline. */
export function gapRecord(input: GapInput): JournalRecord {
  const streamId = streamIdOf(input.stream);
  return {
    type: "gap",
    eventId: recordIdFor("gap", streamId, input.lastGoodResourceVersion, input.detectedAt),
    clusterId: input.stream.clusterId,
    streamId,
    observedAt: input.detectedAt,
    synthetic: false,
    gap: {
      lastGoodResourceVersion: input.lastGoodResourceVersion,
      reason: input.reason,
      detectedAt: input.detectedAt,
    },
  };
}

export interface CoverageInput {
  stream: StreamKey;
  state: "available" | "unavailable" | "stopped";
  reason: string;
  observedAt: string;
  httpStatus?: number;
  /** Set on a resume after recorder downtime: the last durable checkpoint before it. */
  downSince?: string;
}

/** Builds a coverage change: a stream started or stopped being recordable (CRD gone, RBAC, ...). */
export function coverageRecord(input: CoverageInput): JournalRecord {
  const streamId = streamIdOf(input.stream);
  const coverage: NonNullable<JournalRecord["coverage"]> = {
    state: input.state,
    reason: input.reason,
  };
  if (input.httpStatus !== undefined) coverage.httpStatus = input.httpStatus;
  if (input.downSince !== undefined) coverage.downSince = input.downSince;
  return {
    type: "coverage_change",
    eventId: recordIdFor("coverage", streamId, input.state, input.reason, input.observedAt),
    clusterId: input.stream.clusterId,
    streamId,
    observedAt: input.observedAt,
    synthetic: false,
    coverage,
  };
}

export interface CheckpointInput {
  stream: StreamKey;
  resourceVersion: string;
  observedAt: string;
  bookmark: boolean;
}

/** Builds a checkpoint record (a BOOKMARK or an explicit progress mark); never an object change. */
export function checkpointRecord(input: CheckpointInput): JournalRecord {
  const streamId = streamIdOf(input.stream);
  const rec: JournalRecord = {
    type: "checkpoint",
    eventId: recordIdFor("checkpoint", streamId, input.resourceVersion, String(input.bookmark)),
    clusterId: input.stream.clusterId,
    streamId,
    observedAt: input.observedAt,
    synthetic: false,
    checkpoint: { resourceVersion: input.resourceVersion, bookmark: input.bookmark },
  };
  if (input.bookmark) rec.watchType = "BOOKMARK";
  return rec;
}

/** Builds a snapshot record: a named vector of per-stream watermarks. */
export function snapshotRecord(
  clusterId: string,
  snapshot: z.infer<typeof SnapshotPayloadSchema>,
  observedAt: string,
): JournalRecord {
  return {
    type: "snapshot",
    eventId: recordIdFor("snapshot", clusterId, snapshot.name, snapshot.at, observedAt),
    clusterId,
    streamId: GLOBAL_STREAM_ID,
    observedAt,
    synthetic: false,
    snapshot,
  };
}

/**
 * Builds an audit correlation record that points at a recorded event by its stream and resource.
 * observedAt is the event's own observedAt, so a reader finds the correlations of an event by its
 * stream and time. The id names the audit stage and response code: the stages of one request stay
 * distinct, and ingesting the same audit line again makes the same id.
 */
export function auditCorrelationRecord(
  streamId: string,
  clusterId: string,
  resource: ResourceRef,
  audit: z.infer<typeof AuditCorrelationSchema>,
  observedAt: string,
): JournalRecord {
  return {
    type: "audit_correlation",
    eventId: recordIdFor(
      "audit",
      streamId,
      audit.auditId,
      audit.stage,
      String(audit.code),
      resource.uid,
      resource.resourceVersion,
    ),
    clusterId,
    streamId,
    observedAt,
    synthetic: false,
    resource,
    audit,
  };
}
