// A read-only view over the journal file for bulk "state of every object at T" queries. The Journal
// interface answers one object at a time; a snapshot of 10k objects needs one pass with shared
// statements. It reads the journal's own row format through the journal's decoders, never writes.
import Database from "better-sqlite3";
import type { JournalRecord } from "../event/schema";
import { DEFAULTS } from "../journal/journal";
import { decodeRow, type Meta } from "../journal/store/rows";
import { latestAtTime } from "../journal/read/object-at";
import { BUCKETS_CTE, OBJECT_BUCKET, TYPE_CODES, WATCH_CODES } from "../journal/store/schema";
import { Store, type BodyRow, type RecordRow } from "../journal/store/store";

const BASELINE = TYPE_CODES.indexOf("baseline");
const DELETED = WATCH_CODES.indexOf("DELETED");
const CHECKPOINT = TYPE_CODES.indexOf("checkpoint");

/** An object identity as the journal keys it. */
export interface ObjectIdentity {
  id: number;
  kind: string;
  group: string;
  namespace: string;
  name: string;
}

/** Where an object stood at a point: its last record, or why it did not exist. */
export interface ObjectPosition {
  identity: ObjectIdentity;
  row: RecordRow;
  streamId: string;
  /** false when the last record is a delete, or a later relist of its stream did not list it. */
  exists: boolean;
  /** Why it does not exist (a delete, or a disappearance during a gap). */
  absentReason?: string;
  /** When it stopped existing (the delete, or the relist that did not list it). */
  absentAtMs?: number;
}

/** A baseline marker: the point where a stream's list completed. */
export interface BaselineMark {
  seq: number;
  observedAtMs: number;
  listResourceVersion: string;
}

export interface PositionFilter {
  namespace?: string;
  streamIds?: ReadonlySet<string>;
  kinds?: ReadonlySet<string>;
}

/** Read-only bulk queries over a journal file. */
export class JournalReader {
  private readonly db: Database.Database;
  private readonly store: Store;
  private readonly stmt;
  private readonly markCache = new Map<string, BaselineMark[]>();

  constructor(
    readonly path: string,
    nativeBinding?: string,
  ) {
    const opts: Database.Options = { readonly: true, fileMustExist: true };
    if (nativeBinding) opts.nativeBinding = nativeBinding;
    try {
      this.db = new Database(path, opts);
    } catch (err) {
      throw new Error(`cannot open journal ${path} read-only`, { cause: err });
    }
    // Bulk reads touch pages all over the file; mapping it saves a read() and a copy per page.
    this.db.pragma(`mmap_size = ${DEFAULTS.readerMmapBytes}`);
    this.store = new Store(this.db);
    this.stmt = {
      // Control rows (baseline markers, checkpoints) are indexed by (type, stream, seq).
      controlPosition: this.db.prepare(
        "SELECT rv, seq, observed_at FROM records WHERE object IS NULL AND type IN (?,?) AND stream=? AND rv IS NOT NULL AND observed_at<=? ORDER BY seq DESC LIMIT 1",
      ),
      lastControl: this.db.prepare(
        "SELECT meta FROM records WHERE object IS NULL AND type=? AND stream=? AND observed_at<=? ORDER BY seq DESC LIMIT 1",
      ),
      before: this.db.prepare(
        "SELECT observed_at FROM records WHERE stream=? AND seq<? ORDER BY seq DESC LIMIT 1",
      ),
      marks: this.db.prepare(
        "SELECT seq, observed_at, rv FROM records WHERE object IS NULL AND type=? AND stream=? ORDER BY seq",
      ),
    };
  }

  /** The time before which retention removed history, or null. */
  prunedBefore(): string | null {
    const r = this.db.prepare("SELECT value FROM meta WHERE key='pruned_before'").get() as
      | { value: string }
      | undefined;
    return r?.value ?? null;
  }

  /** Object identities of a cluster, optionally in one namespace. */
  objects(clusterId: string, namespace?: string): ObjectIdentity[] {
    const sql =
      'SELECT id, kind, grp AS "group", namespace, name FROM objects WHERE cluster_id=?' +
      (namespace !== undefined ? " AND namespace=?" : "") +
      " ORDER BY kind, namespace, name";
    const args = namespace !== undefined ? [clusterId, namespace] : [clusterId];
    const rows = this.db.prepare(sql).all(...args) as ObjectIdentity[];
    // Decoding a record looks its identity up again; hand over what this query already read.
    for (const r of rows) this.store.registry.rememberObject({ ...r, clusterId });
    return rows;
  }

  /** Object identities whose name matches a LIKE pattern (escaped with \\), any cluster by default. */
  findObjects(
    nameLike: string,
    clusterId?: string,
    kind?: string,
  ): (ObjectIdentity & { clusterId: string })[] {
    const where = ["name LIKE ? ESCAPE '\\'"];
    const args: string[] = [nameLike];
    if (clusterId !== undefined) {
      where.push("cluster_id=?");
      args.push(clusterId);
    }
    if (kind !== undefined) {
      where.push("kind=?");
      args.push(kind);
    }
    return this.db
      .prepare(
        `SELECT id, cluster_id AS clusterId, kind, grp AS "group", namespace, name FROM objects WHERE ${where.join(" AND ")} ORDER BY cluster_id, kind, namespace, name`,
      )
      .all(...args) as (ObjectIdentity & { clusterId: string })[];
  }

  /** Kinds recorded in a cluster. */
  kinds(clusterId: string): string[] {
    const rows = this.db
      .prepare("SELECT DISTINCT kind FROM objects WHERE cluster_id=? ORDER BY kind")
      .all(clusterId) as { kind: string }[];
    return rows.map(r => r.kind);
  }

  /** Baseline markers of a stream, oldest first. */
  baselineMarks(streamId: string): BaselineMark[] {
    const hit = this.markCache.get(streamId);
    if (hit) return hit;
    const s = this.store.registry.streamsById.get(streamId);
    const rows = s
      ? (this.stmt.marks.all(BASELINE, s.id) as { seq: number; observed_at: number; rv: string }[])
      : [];
    const marks = rows.map(r => ({
      seq: r.seq,
      observedAtMs: r.observed_at,
      listResourceVersion: r.rv,
    }));
    this.markCache.set(streamId, marks);
    return marks;
  }

  /**
   * The last durable position (RV) of a stream at or before a time: the newest of its control rows
   * and of the given object positions (each object's last record at that time, as positionsAt gives).
   */
  streamPositionAt(
    streamId: string,
    atMs: number,
    objectPositions: readonly ObjectPosition[] = [],
  ): { resourceVersion: string; seq: number; observedAt: string } | null {
    const s = this.store.registry.streamsById.get(streamId);
    if (!s) return null;
    let best = this.stmt.controlPosition.get(BASELINE, CHECKPOINT, s.id, atMs) as
      | { rv: string; seq: number; observed_at: number }
      | undefined;
    for (const p of objectPositions) {
      if (p.streamId !== streamId || p.row.rv === null) continue;
      if (!best || p.row.seq > best.seq)
        best = { rv: p.row.rv, seq: p.row.seq, observed_at: p.row.observed_at };
    }
    if (!best) return null;
    return {
      resourceVersion: best.rv,
      seq: best.seq,
      observedAt: new Date(best.observed_at).toISOString(),
    };
  }

  /** The last control record of a type on a stream at or before a time (meta decoded), or null. */
  lastControlAt(streamId: string, type: (typeof TYPE_CODES)[number], atMs: number): Meta | null {
    const s = this.store.registry.streamsById.get(streamId);
    if (!s) return null;
    const r = this.stmt.lastControl.get(TYPE_CODES.indexOf(type), s.id, atMs) as
      | { meta: string | null }
      | undefined;
    if (!r) return null;
    return r.meta ? (JSON.parse(r.meta) as Meta) : {};
  }

  /** Observation time (ms) of the stream's last record before a position, or null. */
  lastObservedBefore(streamId: string, seq: number): number | null {
    const s = this.store.registry.streamsById.get(streamId);
    if (!s) return null;
    const r = this.stmt.before.get(s.id, seq) as { observed_at: number } | undefined;
    return r?.observed_at ?? null;
  }

  /** Where one object stood at a time: its last record at or before it, with existence resolved. */
  positionAt(identity: ObjectIdentity, atMs: number): ObjectPosition | null {
    const row = latestAtTime(this.store, identity.id, atMs);
    if (!row) return null;
    const streamId = this.store.registry.streams.get(row.stream)?.streamId;
    if (!streamId) throw new Error(`record ${row.seq} points at unknown stream ${row.stream}`);
    const pos: ObjectPosition = { identity, row, streamId, exists: true };
    if (row.watch === DELETED) {
      pos.exists = false;
      pos.absentReason = `deleted at ${new Date(row.observed_at).toISOString()}`;
      pos.absentAtMs = row.observed_at;
      return pos;
    }
    // A relist after this record that did not include the object means it vanished during a gap.
    const marks = this.baselineMarks(streamId);
    let later: BaselineMark | undefined;
    for (let i = marks.length - 1; i >= 0 && marks[i].seq > row.seq; i--) {
      if (marks[i].observedAtMs <= atMs) {
        later = marks[i];
        break;
      }
    }
    if (later && !(row.type === BASELINE && this.listOf(row) === later.listResourceVersion)) {
      pos.exists = false;
      pos.absentAtMs = later.observedAtMs;
      pos.absentReason = `absent from the relist at ${new Date(later.observedAtMs).toISOString()}; deleted during a gap`;
    }
    return pos;
  }

  private listOf(row: RecordRow): string | undefined {
    if (!row.meta) return undefined;
    const meta = JSON.parse(row.meta) as { p?: { listResourceVersion?: string } };
    return meta.p?.listResourceVersion;
  }

  /** Positions of every object (matching the filter) at a time; objects never seen by then are left out. */
  positionsAt(clusterId: string, atMs: number, filter: PositionFilter = {}): ObjectPosition[] {
    return this.store.buckets.withPinnedRange(() => this.positionsIn(clusterId, atMs, filter));
  }

  private positionsIn(clusterId: string, atMs: number, filter: PositionFilter): ObjectPosition[] {
    const out: ObjectPosition[] = [];
    for (const identity of this.objects(clusterId, filter.namespace)) {
      if (filter.kinds && !filter.kinds.has(identity.kind)) continue;
      const pos = this.positionAt(identity, atMs);
      if (!pos) continue;
      if (filter.streamIds && !filter.streamIds.has(pos.streamId)) continue;
      out.push(pos);
    }
    return out;
  }

  /** The full journal record at a position, object included (one keyframe plus at most one patch). */
  record(pos: ObjectPosition, keyframes?: Map<number, BodyRow>): JournalRecord {
    const object = pos.row.body
      ? this.store.versions.objectOfRow(pos.identity.id, pos.row, keyframes)
      : undefined;
    return decodeRow(this.store, { ...pos.row, body: null }, object);
  }

  /**
   * Records at many positions, in the order given. Their keyframes are read first, in file order,
   * so the reads walk the file forward instead of seeking once per object.
   */
  records(positions: readonly ObjectPosition[]): JournalRecord[] {
    const bases = positions.flatMap(p => (p.row.base !== null ? [p.row.base] : []));
    const keyframes = this.store.versions.keyframeRows(bases);
    return positions.map(p => this.record(p, keyframes));
  }

  /** The journal record at a position without rebuilding its object (for provenance only). */
  header(pos: ObjectPosition): JournalRecord {
    return decodeRow(this.store, { ...pos.row, body: null });
  }

  /** Kinds recorded on a stream (a stream holds one resource, so normally one kind). */
  kindsOfStream(streamId: string): string[] {
    const s = this.store.registry.streamsById.get(streamId);
    if (!s) return [];
    const rows = this.db
      .prepare(
        "SELECT DISTINCT o.kind FROM objects o WHERE o.id IN (SELECT object FROM records WHERE stream=? AND object IS NOT NULL LIMIT 1000)",
      )
      .all(s.id) as { kind: string }[];
    return rows.map(r => r.kind);
  }

  /** Streams that recorded an object identity. */
  streamsOfObject(objectId: number): string[] {
    const range = this.store.buckets.range(0, Number.MAX_SAFE_INTEGER);
    const rows = range
      ? (this.store.sql
          .prep(
            `${BUCKETS_CTE} SELECT DISTINCT r.stream FROM b CROSS JOIN records r ON r.${OBJECT_BUCKET}=b.k AND r.object=?`,
          )
          .all(...range, objectId) as { stream: number }[])
      : [];
    return [...new Set(rows.map(r => r.stream))].map(
      s => this.store.registry.streams.get(s)!.streamId,
    );
  }

  close(): void {
    this.db.close();
  }
}
