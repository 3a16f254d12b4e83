// Look-ups for audit correlation: which recorded change an audit event describes, and which
// audit correlations describe a recorded change. Every scan is bounded by a time window and a
// page size, so an audit event for an object the journal never saw costs a few index probes.
import type { Statement } from "better-sqlite3";
import type { JournalRecord, ResourceRef } from "../../event";
import { isoFromMs } from "../codec/iso-time";
import { decodeRow, typeCode, type Meta } from "../store/rows";
import { OBJECT_BUCKET, WATCH_CODES } from "../store/schema";
import type { RecordRow, Store } from "../store/store";
import type { ChangeKey, ChangeMatch, ChangeSearch, RecordedChange } from "../types";
import { ROW_COLS } from "./columns";
import { kindsOfStream } from "./identities";

const EVENT = typeCode("event");
const AUDIT = typeCode("audit_correlation");
const DELETED = WATCH_CODES.indexOf("DELETED");

/** seq, stream, observed_at, watch, rv, meta of a record row. */
type HeaderRow = [number, number, number, number | null, string, string | null];

/** Per-call caches: stream kinds and bucket times change rarely, and a call looks up many keys. */
export class ChangeFinder {
  private readonly kinds = new Map<string, string[]>();
  private bucketKs: number[] = [];
  private bucketMins: number[] = [];

  private readonly byRv: Statement;

  constructor(private readonly store: Store) {
    this.byRv = store.sql.prepRaw(
      `SELECT seq, stream, observed_at, watch, rv, meta FROM records WHERE ${OBJECT_BUCKET}=? AND object=? AND type=${EVENT} AND rv=? AND observed_at BETWEEN ? AND ? ORDER BY seq DESC LIMIT 1`,
    );
    const rows = store.sql
      .prep("SELECT k, min_observed FROM bucket_times ORDER BY k")
      .raw(true)
      .all() as [number, number][];
    for (const [k, m] of rows) {
      this.bucketKs.push(k);
      this.bucketMins.push(m);
    }
  }

  /** Kinds recorded for the key's resource on its candidate streams (the audit names the plural). */
  private kindsOf(key: ChangeKey): string[] {
    if (key.kind) return [key.kind];
    const cacheKey = `${key.clusterId}\u0000${key.group}\u0000${key.resource}`;
    const hit = this.kinds.get(cacheKey);
    if (hit) return hit;
    const out = new Set<string>();
    for (const s of this.store.registry.streams.values()) {
      const k = s.key;
      if (!k || k.clusterId !== key.clusterId || k.group !== key.group) continue;
      if (k.resource !== key.resource) continue;
      for (const kind of kindsOfStream(this.store, s.streamId)) out.add(kind);
    }
    const kinds = [...out];
    this.kinds.set(cacheKey, kinds);
    return kinds;
  }

  /** The index buckets, newest first, that can hold rows observed in [fromMs, toMs]. */
  private buckets(fromMs: number, toMs: number): [number, number] | null {
    const ks = this.bucketKs;
    if (ks.length === 0) return null;
    // Rows are appended roughly in time order: the last bucket starting by toMs is the newest to
    // look at, and the last one starting by fromMs the oldest.
    const hi = this.lastStartingBy(toMs);
    if (hi < 0) return null;
    const lo = Math.max(0, this.lastStartingBy(fromMs));
    return [ks[lo], ks[hi]];
  }

  private lastStartingBy(ms: number): number {
    let lo = 0;
    let hi = this.bucketMins.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (this.bucketMins[mid] <= ms) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  }

  find(key: ChangeKey, search: ChangeSearch): ChangeMatch | null {
    const range = this.buckets(key.atMs - search.windowMs, key.atMs + search.windowMs);
    if (!range) return null;
    for (const kind of this.kindsOf(key)) {
      const id = this.store.registry.findObject(
        key.clusterId,
        key.group,
        kind,
        key.namespace,
        key.name,
      );
      if (id === null) continue;
      const hit = this.probe(id, key, range, search);
      if (hit) return hit;
    }
    return null;
  }

  private probe(
    id: number,
    key: ChangeKey,
    range: [number, number],
    search: ChangeSearch,
  ): ChangeMatch | null {
    const from = key.atMs - search.windowMs;
    const to = key.atMs + search.windowMs;
    let budget = search.pageSize;
    if (key.resourceVersion !== null) {
      // A name-and-RV hit is one write: only the row's header is read, never its body.
      for (let b = range[1]; b >= range[0] && budget > 0; b--) {
        const row = this.byRv.get(b, id, key.resourceVersion, from, to) as HeaderRow | undefined;
        budget--;
        if (row) return this.matchOf(id, row, key);
      }
      return null;
    }
    const stmt = this.store.sql.prep(
      `SELECT ${ROW_COLS} FROM records WHERE ${OBJECT_BUCKET}=? AND object=? AND type=${EVENT} AND watch=${DELETED}` +
        " AND observed_at BETWEEN ? AND ? ORDER BY seq DESC LIMIT ?",
    );
    for (let b = range[1]; b >= range[0] && budget > 0; b--) {
      const rows = stmt.all(b, id, from, to, budget) as RecordRow[];
      budget -= Math.max(1, rows.length);
      for (const row of rows) {
        // A delete carries no RV, so its uid (in the stored object) picks the object.
        const rec = decodeRow(this.store, row);
        if (!rec.resource || rec.resource.uid !== key.uid) continue;
        return {
          streamId: rec.streamId,
          clusterId: rec.clusterId,
          observedAt: rec.observedAt,
          seq: row.seq,
          watchType: rec.watchType ?? null,
          resource: rec.resource,
        };
      }
    }
    return null;
  }

  /** The match of a row found by RV, from its header columns and the identity tables. */
  private matchOf(id: number, row: HeaderRow, key: ChangeKey): ChangeMatch | null {
    const [seq, streamRow, observedAt, watch, rv, metaJson] = row;
    const stream = this.store.registry.streamOf(streamRow, seq);
    const meta: Meta = metaJson ? (JSON.parse(metaJson) as Meta) : {};
    if (meta.r && meta.r.uid && key.uid && meta.r.uid !== key.uid) return null;
    const o = this.store.registry.objectRow(id);
    const resource: ResourceRef = meta.r
      ? { ...meta.r, uid: meta.r.uid || key.uid }
      : {
          group: o.group,
          version: stream.version,
          kind: o.kind,
          namespace: o.namespace,
          name: o.name,
          uid: key.uid,
          resourceVersion: rv,
        };
    return {
      streamId: stream.streamId,
      clusterId: meta.cl ?? stream.clusterId,
      observedAt: meta.o ?? isoFromMs(observedAt),
      seq,
      watchType: watch === null ? null : WATCH_CODES[watch],
      resource,
    };
  }
}

/** The audit correlation records of recorded changes, one list per change, in the order given. */
export function correlationsOf(
  store: Store,
  changes: readonly RecordedChange[],
): JournalRecord[][] {
  const stmt = store.sql.prep(
    `SELECT ${ROW_COLS} FROM records WHERE type=${AUDIT} AND object IS NULL AND stream=? AND observed_at=? ORDER BY seq`,
  );
  // A stream without any audit record (no audit webhook, the common case) answers with one probe
  // of records_audit instead of one per change.
  const any = store.sql
    .prep(`SELECT 1 FROM records WHERE type=${AUDIT} AND object IS NULL AND stream=? LIMIT 1`)
    .pluck();
  const audited = new Map<number, boolean>();
  return changes.map(c => {
    const s = store.registry.streamsById.get(c.streamId);
    const ms = Date.parse(c.observedAt);
    if (!s || Number.isNaN(ms)) return [];
    let has = audited.get(s.id);
    if (has === undefined) audited.set(s.id, (has = any.get(s.id) !== undefined));
    if (!has) return [];
    const rows = stmt.all(s.id, ms) as RecordRow[];
    const out: JournalRecord[] = [];
    for (const row of rows) {
      const rec = decodeRow(store, row);
      const r = rec.resource;
      if (!r || r.resourceVersion !== c.resourceVersion) continue;
      if (c.uid && r.uid && r.uid !== c.uid) continue;
      out.push(rec);
    }
    return out;
  });
}
