import type { JournalRecord, RecordType, ResourceRef, StreamKey } from "../event";
import type { RecorderLeaseOptions } from "./write/lease";

/** How hard SQLite syncs; see docs/consistency.md for what each setting promises. */
export type SyncMode = "FULL" | "NORMAL";

export interface RedactOptions {
  /** Kinds whose data values are replaced by key names and digests (Secret is always included). */
  kinds: string[];
  /** ConfigMap data keys matching any of these are redacted the same way. */
  configMapKeyPatterns: RegExp[];
  /** Annotations holding a manifest copy, digested on redacted objects (default: MANIFEST_COPY_ANNOTATIONS). */
  annotations: string[];
  /**
   * File holding the digest key (at least 16 bytes); it must exist. Without it the key lives in a
   * file beside the journal (`<journal>-digest.key`, created once, mode 0600), never in the journal.
   */
  keyFile: string;
}

export interface RetentionOptions {
  /** Byte budget of the journal file and its WAL together. */
  maxBytes?: number;
  /**
   * Byte budget as a share (0-100) of the journal's volume, measured with statfs when it opens; the
   * smaller of this and maxBytes applies.
   */
  volumePercent?: number;
  maxAgeMs?: number;
}

/**
 * How much the journal checks when it opens; a journal that fails is not opened. "tail" is bounded
 * (schema, meta, the newest records decoded), "quick" is SQLite's quick_check of every page, "full"
 * is fsck of every chain and checkpoint; the last two grow with the file.
 */
export type OpenCheck = "none" | "tail" | "quick" | "full";

/** Options of the read-only view. */
export interface JournalViewOptions {
  busyTimeoutMs?: number;
  /**
   * For a short read (the CLI): when nobody has the journal open (no -wal file), read it as an
   * immutable file, so nothing is created beside it and a read-only directory works. A writer that
   * starts meanwhile is not seen. Long-lived views (the sidecar) leave this off.
   */
  idleSnapshot?: boolean;
  /**
   * Bytes of the file to map (default 1 GiB). Mapped pages count in the process's resident memory,
   * once per view, so a process with several long-lived views (the sidecar) maps less or none.
   */
  mmapBytes?: number;
  /** SQLite's page cache of this view in KiB (default SQLite's own, 2 MiB). */
  pageCacheKiB?: number;
  /** Native addon path for bundled builds (D3); defaults to the installed better-sqlite3. */
  nativeBinding?: string;
}

/** Counters of the writer since it opened. */
export interface JournalStats {
  duplicates: number;
  cacheHits: number;
  cacheMisses: number;
  /**
   * The tier of keyframe bodies behind the last-version cache: bodies kept, their memory, its bound,
   * cache misses it answered (hits) and misses it had no body for, which read the keyframe from disk.
   */
  keyframeBodies: {
    entries: number;
    bytes: number;
    budgetBytes: number;
    hits: number;
    misses: number;
  };
  records: number;
  /** The byte budget the journal runs with (null: none). */
  budgetBytes: number | null;
  /** The bound of SQLite's page cache of this connection, KiB. */
  pageCacheKiB: number;
  /** Object identities the writer keeps mapped to their ids: how many now, and its bound. */
  identities: { cached: number; capacity: number };
  /** The dedup filter: its fixed memory, the ids it holds, and records checked by exact look-up. */
  dedup: { bytes: number; ids: number; windowStart: number; exactChecks: number };
}

export interface JournalOptions {
  sync?: SyncMode;
  /** false: fail with NOT_FOUND instead of creating a missing journal (default true). */
  create?: boolean;
  /** See OpenCheck; the schema version is always checked. */
  check?: OpenCheck;
  /** Records the "tail" check decodes and compares with their hashes (default 2000). */
  tailRows?: number;
  busyTimeoutMs?: number;
  keyframeEvery?: number;
  /** Bounded cache of the last version per object, so appends diff without a read. */
  lastVersionCacheSize?: number;
  /**
   * Bytes of current keyframe bodies (as stored, mostly deflated) the writer keeps behind that cache,
   * so a miss decodes the keyframe from memory instead of reading it back (default 16 MiB; 0: none).
   */
  keyframeBodyCacheBytes?: number;
  /**
   * Upper bound of SQLite's page cache in KiB (default 64 MiB). The cache fills up to it as a long
   * journal is appended to, so a process that must stay small (the recorder) sets less.
   */
  pageCacheKiB?: number;
  redact?: Partial<RedactOptions>;
  retention?: RetentionOptions;
  /**
   * Pipelined appends (appendAsync): each batch commits on a writer thread with its own connection
   * while this thread plans the next. Off by default (Journal.enableWriterThread turns it on later).
   */
  writerThread?: boolean;
  /**
   * The writer thread's script (writer-worker.js), for a bundle that does not sit beside it: the Pepr
   * module is unpacked into /app by its controller, and the image keeps the script in dist/cli.
   */
  writerScript?: string;
  /** Object-record ids per generation of the dedup window (two generations; 2 to 4 bytes per id). */
  dedupWindow?: number;
  /** Native addon path for bundled builds (D3); defaults to the installed better-sqlite3. */
  nativeBinding?: string;
  /**
   * Take the recorder's lease (write/lease.ts): the open fails with LEASED while another live
   * recorder holds it. Only recorders ask; snapshot writers and salvage do not.
   */
  recorderLease?: RecorderLeaseOptions | true;
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

/** Why an object that had been recorded did not exist at a point. */
export interface Absence {
  /** A DELETED event was recorded, or a later relist of its stream did not list it. */
  reason: "deleted" | "vanished-in-gap";
  /** Observed time of the delete, or of the relist that did not list it. */
  atMs: number;
  /** The resourceVersion of the delete; null for a disappearance. */
  resourceVersion: string | null;
}

/**
 * A stretch of a stream's history that is unknown: from the last moment the stream was known good
 * to the relist that closed it. The one gap type of krply; people's wording lives in materialize.
 */
export interface GapWindow {
  streamId: string;
  /** ingestSeq of the GAP record. */
  gapSeq: number;
  /**
   * Observed time of the stream's record of lastGoodResourceVersion (its first record when that is
   * empty): continuity is proven up to here, and nothing written after it moves the start.
   */
  fromMs: number;
  /** When the resolving relist was taken; null while the gap is open. */
  toMs: number | null;
  reason: string;
  lastGoodResourceVersion: string;
  /** listResourceVersion of the baseline that closed the gap; null while it is open. */
  resolvedByBaselineRv: string | null;
}

/**
 * A stretch in which the recorder was down and a stream then resumed from its checkpoint: nothing
 * was lost, but changes in it were observed late, so their times are not the times of change.
 */
export interface DownWindow {
  streamId: string;
  /** ingestSeq of the coverage change written at the resume. */
  seq: number;
  /** The stream's last durable checkpoint (or heartbeat) before the downtime. */
  fromMs: number;
  /** The resume. */
  toMs: number;
}

/** A time range to test gap windows against; a point is a range with from === to. */
export interface TimeRange {
  fromMs: number;
  toMs: number;
}

/** Facts about an object at a point, for materialize to turn into an answer. */
export interface ObjectAtResult {
  /** The record whose object was current at the point; null if the object did not exist. */
  record: JournalRecord | null;
  exists: boolean;
  /** Set when the object's last record before the point shows it gone. */
  absence: Absence | null;
  /** Gap windows (of the object's stream, or of every stream when it was never seen) over the point. */
  gaps: GapWindow[];
  /** Recorder down windows over the point, of the same streams as gaps. */
  downWindows: DownWindow[];
  /** The stream of the object's last record at or before the point; null when it was never seen. */
  streamId: string | null;
  inGap: boolean;
  /** The prune horizon, when the point lies before it. */
  prunedBefore: string | null;
  /** How many API groups matched a selector that left out the group. */
  matchingGroups: number;
  /** For a resourceVersion point: the RV was never recorded on the stream. */
  rvNotRecorded: boolean;
}

/** What `krply fsck --salvage` copied out of a damaged journal. */
export interface SalvageResult {
  source: string;
  target: string;
  /** Records copied into the new file. */
  copied: number;
  /** Rows that could not be read or rebuilt. */
  lost: number;
  /** Runs of lost seqs, oldest first. */
  lostRanges: { fromSeq: number; toSeq: number }[];
  /** GAP records written for the losses (one per stream and run). */
  gaps: number;
  streams: number;
  /** Stream checkpoints carried over (only from a file that lost nothing). */
  checkpoints: number;
}

export interface FsckReport {
  ok: boolean;
  checked: number;
  problems: string[];
}

/** An object identity as the journal keys it. */
export interface ObjectIdentity {
  id: number;
  kind: string;
  group: string;
  namespace: string;
  name: string;
}

/**
 * Where an object stood at a point: its last record at or before it, with existence resolved.
 * Only a view makes positions; pass them back to the view that made them.
 */
export interface ObjectPosition {
  identity: ObjectIdentity;
  streamId: string;
  /** ingestSeq of the record. */
  seq: number;
  resourceVersion: string | null;
  observedAtMs: number;
  /** false when the last record is a delete, or a later relist of its stream did not list it. */
  exists: boolean;
  absence: Absence | null;
}

/** A baseline marker: the point where a stream's list completed. */
export interface BaselineMark {
  seq: number;
  observedAtMs: number;
  listResourceVersion: string;
}

/** The last durable position of a stream at a point. */
export interface StreamPosition {
  resourceVersion: string;
  seq: number;
  observedAt: string;
}

export interface PositionFilter {
  namespace?: string;
  streamIds?: ReadonlySet<string>;
  kinds?: ReadonlySet<string>;
}

/** A coverage change of a stream: it became recordable again, or stopped being recordable. */
export type CoverageState = NonNullable<JournalRecord["coverage"]>;

/** A change an audit event describes, as the journal can look it up. */
export interface ChangeKey {
  clusterId: string;
  group: string;
  /** Plural resource, as the audit event's objectRef names it. */
  resource: string;
  /** Kind, when the audit event's response names it; else the kinds recorded for the resource. */
  kind?: string;
  namespace: string;
  name: string;
  uid: string;
  /** The resourceVersion the write produced; null for a delete whose response names none. */
  resourceVersion: string | null;
  /** When the API server finished the request (its clock), the centre of the time window. */
  atMs: number;
}

/** The bounds of one change look-up. */
export interface ChangeSearch {
  /** Recorded events observed further than this from the audit time are not looked at. */
  windowMs: number;
  /** At most this many candidate rows are read per key. */
  pageSize: number;
}

/** A recorded event that an audit event describes. */
export interface ChangeMatch {
  streamId: string;
  clusterId: string;
  observedAt: string;
  seq: number;
  watchType: string | null;
  resource: ResourceRef;
}

/** A recorded change whose audit correlations a reader wants. */
export interface RecordedChange {
  streamId: string;
  observedAt: string;
  resourceVersion: string;
  uid?: string;
}

/**
 * The journal read-only: long-lived, cheap to query many times, migration-checked at open. Every
 * read of krply goes through one; a view can never append.
 */
export interface JournalView {
  readonly path: string;
  streams(): StreamInfo[];
  events(query: EventQuery): EventPage;
  objectHistory(sel: ObjectSelector): JournalRecord[];
  /** Ingest positions of an object's versions, oldest first, from the index alone (no bodies). */
  objectVersionSeqs(sel: ObjectSelector): number[];
  /** The object's versions stored from one position to another (both included), oldest first. */
  objectVersionsBetween(sel: ObjectSelector, fromSeq: number, toSeq: number): JournalRecord[];
  /**
   * A mark that changes when the object gains a record, when one of these streams gains a gap,
   * baseline marker, coverage change or audit correlation, or when retention prunes: what a
   * cached timeline of the object is read from. A few index look-ups.
   */
  objectMark(sel: ObjectSelector, streamIds: readonly string[]): string;
  /** Runs fn in one read transaction: every read inside sees the journal as of one moment. */
  consistentRead<T>(fn: () => T): T;
  objectAt(sel: ObjectSelector, at: PointInTime): ObjectAtResult;
  baselines(streamId?: string): JournalRecord[];
  /** GAP records, each with the baseline that resolved it filled in. */
  gaps(streamId?: string): JournalRecord[];
  /** Gap windows, optionally of one stream and only those overlapping a range. */
  gapWindows(streamId?: string, during?: TimeRange): GapWindow[];
  /** Whether the stream holds a record at this resourceVersion (an event, marker or checkpoint). */
  hasResourceVersion(streamId: string, rv: string): boolean;
  /** Recorder down windows, optionally of one stream and only those overlapping a range. */
  downWindows(streamId?: string, during?: TimeRange): DownWindow[];
  snapshots(): JournalRecord[];
  /** The time before which retention removed history, or null. */
  prunedBefore(): string | null;
  /**
   * How many times records were removed (retention, expired snapshots). While it stands still, the
   * records up to any stored seq are exactly as they were read: appends only add newer ones.
   */
  removals(): number;
  /**
   * A number that moves whenever the journal changed (a commit by any connection): an answer
   * computed from the journal may be kept for as long as it stands still.
   */
  changeMark(): number;
  /** Baseline markers of a stream, oldest first. */
  baselineMarks(streamId: string): BaselineMark[];
  /** The stream's last coverage change at or before a time, or null when it never changed. */
  coverageAt(streamId: string, atMs: number): CoverageState | null;
  /**
   * The last durable position (RV) of a stream at or before a time: the newest of its control rows
   * and of the given object positions (each object's last record at that time, as positionsAt gives).
   */
  streamPositionAt(
    streamId: string,
    atMs: number,
    positions?: readonly ObjectPosition[],
  ): StreamPosition | null;
  /** Object identities of a cluster, optionally in one namespace. */
  objects(clusterId: string, namespace?: string): ObjectIdentity[];
  /** Object identities whose name starts with a prefix, any cluster by default. */
  findObjects(
    namePrefix: string,
    filter?: { clusterId?: string; kind?: string },
  ): (ObjectIdentity & { clusterId: string })[];
  /** Kinds recorded in a cluster. */
  kinds(clusterId: string): string[];
  /** Kinds recorded on a stream (a stream holds one resource, so normally one kind). */
  kindsOfStream(streamId: string): string[];
  /** Streams that recorded an object identity. */
  streamsOfObject(identity: ObjectIdentity): string[];
  /** Where one object stood at a time, or null when it had never been seen by then. */
  positionAt(identity: ObjectIdentity, atMs: number): ObjectPosition | null;
  /** Positions of every object (matching the filter) at a time; objects never seen by then are left out. */
  positionsAt(clusterId: string, atMs: number, filter?: PositionFilter): ObjectPosition[];
  /**
   * positionsAt over at most `limit` of a cluster's objects, in id order after `afterId` (0 to
   * start); `next` is the afterId of the following page, null after the last. A walk over every
   * object in pages holds one page of positions at a time. Its positions carry no stored object:
   * they count and give watermarks; record(), records(), header() and sameContent() need
   * positionAt's or positionsAt's.
   */
  positionsPage(
    clusterId: string,
    atMs: number,
    page: { afterId: number; limit: number },
    filter?: PositionFilter,
  ): { positions: ObjectPosition[]; next: number | null };
  /** The full record at a position, object included. */
  record(pos: ObjectPosition): JournalRecord;
  /** Records at many positions, in the order given, reading their keyframes in file order. */
  records(positions: readonly ObjectPosition[]): JournalRecord[];
  /** The record at a position without its object (for provenance only). */
  header(pos: ObjectPosition): JournalRecord;
  /** Whether two positions hold the same stored object (by hash, without rebuilding either). */
  sameContent(a: ObjectPosition, b: ObjectPosition): boolean;
  /** For each key, the recorded event it describes, or null (bounded by search). */
  findChanges(keys: readonly ChangeKey[], search: ChangeSearch): (ChangeMatch | null)[];
  /** For each recorded change, its audit correlation records (one per audit stage). */
  auditCorrelations(changes: readonly RecordedChange[]): JournalRecord[][];
  fsck(): FsckReport;
  /**
   * fsck in slices: each next() checks a few thousand rows and yields the count so far; the return
   * value is the report. Its statements stay open between slices, so use a view of its own.
   */
  fsckSteps(): Generator<number, FsckReport, void>;
  /**
   * The check at open (JournalOptions.check "tail"): the schema, the meta and the newest `rows`
   * records decoded against their hashes, so its cost does not grow with the journal.
   */
  tailCheck(rows: number): FsckReport;
  sizeBytes(): number;
  recordCount(): number;
  close(): void;
}

/**
 * The journal's writer thread: `off` (appends run on the caller's thread), `pending` (asked for; it
 * starts with the next appendAsync), `running`, or `failed` (it did not start or it ended; appends run
 * on the caller's thread again, and `reason` says why).
 */
export type WriterThreadStatus =
  | { state: "off" | "pending" | "running" }
  | { state: "failed"; reason: string };

/** The journal's single writer; it reads through its own connection as a view too. */
export interface Journal extends JournalView {
  append(batch: AppendBatch): AppendResult;
  /**
   * append, pipelined: resolves once the batch is durable; batches commit in call order. With
   * JournalOptions.writerThread the next batch is planned while this one commits on the thread.
   */
  appendAsync(batch: AppendBatch): Promise<AppendResult>;
  /** From the next appendAsync on, batches commit on a writer thread (see JournalOptions.writerThread). */
  enableWriterThread(): void;
  /** Where appendAsync commits: whether a writer thread is asked for, runs, or could not (and why). */
  writerThreadStatus(): WriterThreadStatus;
  setStreamState(streamId: string, state: StreamState): void;
  /** Deletes snapshot records by eventId (other record types are never touched); returns how many. */
  deleteSnapshots(eventIds: string[]): number;
  prune(now?: Date): JournalRecord | null;
  stats(): JournalStats;
  /** Runs a WAL checkpoint (TRUNCATE), so the -wal file stops counting toward size. */
  checkpointWal(): void;
  /** Sets the bound of SQLite's page cache (JournalOptions.pageCacheKiB) from now on. */
  setPageCacheKiB(kib: number): void;
  /**
   * Sets how many object identities (cluster, group, kind, namespace, name) the writer keeps mapped
   * to their ids (default 50,000) from now on; past it the map starts over and ids are read back.
   */
  setIdentityCacheSize(entries: number): void;
}

/** A typed failure of the journal: disk full, I/O, schema, or corruption. */
export class JournalError extends Error {
  constructor(
    message: string,
    readonly code:
      | "DISK_FULL"
      | "BUSY"
      | "IO"
      | "SCHEMA_NEWER"
      | "CORRUPT"
      | "READONLY"
      | "INVALID"
      | "NOT_FOUND"
      | "CLOSED"
      | "LEASED",
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "JournalError";
  }
}
