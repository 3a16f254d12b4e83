import type { JournalRecord, RecordType, StreamKey } from "../event/schema";

/** How hard SQLite syncs; see docs/consistency.md for what each setting promises. */
export type SyncMode = "FULL" | "NORMAL";

export interface RedactOptions {
  /** Kinds whose data values are replaced by key names and digests (Secret is always included). */
  kinds: string[];
  /** ConfigMap data keys matching any of these are redacted the same way. */
  configMapKeyPatterns: RegExp[];
}

export interface RetentionOptions {
  maxBytes?: number;
  maxAgeMs?: number;
}

export interface JournalOptions {
  readonly?: boolean;
  sync?: SyncMode;
  busyTimeoutMs?: number;
  keyframeEvery?: number;
  /** Bounded cache of the last version per object, so appends diff without a read. */
  lastVersionCacheSize?: number;
  redact?: Partial<RedactOptions>;
  retention?: RetentionOptions;
  /** Native addon path for bundled builds (D3); defaults to the installed better-sqlite3. */
  nativeBinding?: string;
}

/** A checkpoint advanced by a batch: committed in the same transaction as the batch's records. */
export interface CheckpointAdvance {
  streamId: string;
  resourceVersion: string;
  observedAt: string;
}

export interface AppendBatch {
  records: JournalRecord[];
  checkpoints: CheckpointAdvance[];
  /** Streams the batch introduces or updates; registered in the same transaction. */
  streams?: StreamKey[];
}

export interface AppendResult {
  appended: number;
  duplicates: number;
  firstSeq: number | null;
  lastSeq: number | null;
}

export type StreamState = "active" | "degraded" | "unavailable" | "stopped";

export interface StreamInfo {
  streamId: string;
  key: StreamKey;
  lastResourceVersion: string | null;
  lastObservedAt: string | null;
  baselinePresent: boolean;
  openGaps: number;
  state: StreamState;
}

export interface EventQuery {
  clusterId?: string;
  streamId?: string;
  kind?: string;
  namespace?: string;
  name?: string;
  since?: string;
  until?: string;
  types?: RecordType[];
  limit?: number;
  cursor?: string;
  /** Set false to skip rebuilding objects (cheaper scans); default true. */
  includeObjects?: boolean;
}

export interface EventPage {
  records: JournalRecord[];
  nextCursor: string | null;
}

export interface ObjectSelector {
  clusterId: string;
  group?: string;
  kind: string;
  namespace: string;
  name: string;
}

export type PointInTime = { time: string } | { resourceVersion: string; streamId: string };

export interface ObjectAtResult {
  /** The record whose object was current at the point; null if the object did not exist. */
  record: JournalRecord | null;
  exists: boolean;
  warnings: string[];
  inGap: boolean;
  prunedBefore: string | null;
}

export interface FsckReport {
  ok: boolean;
  checked: number;
  problems: string[];
}

/** The journal as the rest of krply sees it. */
export interface Journal {
  readonly path: string;
  readonly readonly: boolean;
  append(batch: AppendBatch): AppendResult;
  streams(): StreamInfo[];
  setStreamState(streamId: string, state: StreamState): void;
  events(query: EventQuery): EventPage;
  objectHistory(sel: ObjectSelector): JournalRecord[];
  objectAt(sel: ObjectSelector, at: PointInTime): ObjectAtResult;
  baselines(streamId?: string): JournalRecord[];
  gaps(streamId?: string): JournalRecord[];
  snapshots(): JournalRecord[];
  /** Deletes snapshot records by eventId (other record types are never touched); returns how many. */
  deleteSnapshots(eventIds: string[]): number;
  prune(now?: Date): JournalRecord | null;
  fsck(): FsckReport;
  sizeBytes(): number;
  stats(): { duplicates: number; cacheHits: number; cacheMisses: number; records: number };
  close(): void;
}

/** A typed failure of the journal: disk full, I/O, schema, or corruption. */
export class JournalError extends Error {
  constructor(
    message: string,
    readonly code:
      | "DISK_FULL"
      | "IO"
      | "SCHEMA_NEWER"
      | "CORRUPT"
      | "READONLY"
      | "INVALID"
      | "CLOSED",
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "JournalError";
  }
}
