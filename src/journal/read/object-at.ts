import type { JournalRecord } from "../../event/schema";
import { controlRecords, objectIds } from "./readers";
import { decodeRow } from "../store/rows";
import { OBJECT_BUCKET, TYPE_CODES, WATCH_CODES } from "../store/schema";
import type { RecordRow, Store } from "../store/store";
import { JournalError, type ObjectAtResult, type ObjectSelector, type PointInTime } from "../types";

const COLS =
  "seq, event_id, type, stream, object, observed_at, watch, rv, flags, hash, meta, body, base";
const BASELINE = TYPE_CODES.indexOf("baseline");
const DELETED = WATCH_CODES.indexOf("DELETED");

export interface GapWindow {
  streamId: string;
  gapSeq: number;
  /** Last moment the stream was known good (observedAt of the record before the gap). */
  from: string;
  /** When the resolving baseline was listed; null while the gap is open. */
  to: string | null;
  resolvedByBaselineRv: string | null;
}

/** Gap records with their resolution filled in from the first baseline that followed them. */
export function gapsWithResolution(
  store: Store,
  streamId?: string,
): { record: JournalRecord; window: GapWindow }[] {
  const gaps = controlRecords(store, "gap", streamId);
  const markerAfter = store.sql.prep(
    "SELECT observed_at, rv FROM records WHERE object IS NULL AND type=? AND stream=? AND seq>? ORDER BY seq LIMIT 1",
  );
  const before = store.sql.prep(
    "SELECT observed_at FROM records WHERE stream=? AND seq<? ORDER BY seq DESC LIMIT 1",
  );
  return gaps.map(g => {
    const s = store.registry.streamsById.get(g.streamId)!;
    const m = markerAfter.get(BASELINE, s.id, g.ingestSeq) as
      | { observed_at: number; rv: string }
      | undefined;
    const b = before.get(s.id, g.ingestSeq) as { observed_at: number } | undefined;
    const record: JournalRecord = m ? { ...g, gap: { ...g.gap!, resolvedByBaselineRv: m.rv } } : g;
    return {
      record,
      window: {
        streamId: g.streamId,
        gapSeq: g.ingestSeq!,
        from: b ? new Date(b.observed_at).toISOString() : g.observedAt,
        to: m ? new Date(m.observed_at).toISOString() : null,
        resolvedByBaselineRv: m?.rv ?? null,
      },
    };
  });
}

function inWindow(t: number, w: GapWindow): boolean {
  return t > Date.parse(w.from) && (w.to === null || t < Date.parse(w.to));
}

/** The object as it stood at a time or at a resource version of one stream, with gaps and warnings. */
export function objectAt(
  store: Store,
  sel: ObjectSelector,
  at: PointInTime,
  prunedHorizon: string | null,
): ObjectAtResult {
  store.registry.refreshStreams();
  const ids = objectIds(store, sel);
  const warnings: string[] = [];
  const label = `${sel.kind} ${sel.namespace ? sel.namespace + "/" : ""}${sel.name}`;
  let row: RecordRow | undefined;
  let pointMs: number;
  if ("time" in at) {
    pointMs = Date.parse(at.time);
    if (Number.isNaN(pointMs)) throw new JournalError(`time "${at.time}" is not a date`, "INVALID");
    for (const id of ids) {
      const r = latestAtTime(store, id, pointMs);
      if (r && (!row || r.seq > row.seq)) row = r;
    }
  } else {
    const s = store.registry.streamsById.get(at.streamId);
    if (!s) throw new JournalError(`unknown stream ${at.streamId}`, "INVALID");
    // RVs are opaque: the position is the last record of this stream that carries the RV.
    const pos = rvPosition(store, ids, s.id, at.resourceVersion);
    if (pos.seq === null) {
      warnings.push(
        `resourceVersion ${at.resourceVersion} was never recorded on stream ${at.streamId}`,
      );
      return { record: null, exists: false, warnings, inGap: false, prunedBefore: prunedHorizon };
    }
    const posRow = store.sql.prep("SELECT observed_at FROM records WHERE seq=?").get(pos.seq) as {
      observed_at: number;
    };
    pointMs = posRow.observed_at;
    const stmt = store.sql.prep(
      `SELECT ${COLS} FROM records WHERE ${OBJECT_BUCKET}=? AND object=? AND stream=? AND seq<=? ORDER BY seq DESC LIMIT 1`,
    );
    const upTo = pos.seq;
    for (const id of ids) {
      const r = store.buckets.newest(
        upTo,
        b => stmt.get(b, id, s.id, upTo) as RecordRow | undefined,
      );
      if (r && (!row || r.seq > row.seq)) row = r;
    }
  }
  if (ids.length > 1)
    warnings.push(`${label} matches ${ids.length} API groups; pass group to choose one`);

  let prunedBefore: string | null = null;
  if (prunedHorizon && pointMs < Date.parse(prunedHorizon)) {
    prunedBefore = prunedHorizon;
    warnings.push(`history before ${prunedHorizon} was pruned; the answer may be incomplete`);
  }
  let inGap = false;
  const streamId = row ? store.registry.streams.get(row.stream)!.streamId : undefined;
  for (const { window } of gapsWithResolution(store, streamId)) {
    if (inWindow(pointMs, window)) {
      inGap = true;
      warnings.push(
        `stream ${window.streamId} has a gap from ${window.from} to ${window.to ?? "now (unresolved)"}; changes in it are unknown`,
      );
    }
  }
  if (!row) return { record: null, exists: false, warnings, inGap, prunedBefore };

  const record = decodeRow(store, row);
  if (row.watch === DELETED) {
    warnings.push(
      `${label} was deleted at ${record.observedAt} (resourceVersion ${row.rv ?? "?"})`,
    );
    return { record: null, exists: false, warnings, inGap, prunedBefore };
  }
  // A later baseline of the same stream that did not list the object means it vanished in a gap.
  const marker = store.sql
    .prep(
      `SELECT seq, observed_at, rv FROM records WHERE object IS NULL AND type=? AND stream=? AND seq>? AND observed_at<=?
       ORDER BY seq DESC LIMIT 1`,
    )
    .get(BASELINE, row.stream, row.seq, pointMs) as
    | { seq: number; observed_at: number; rv: string }
    | undefined;
  const ownList =
    record.type === "baseline" && record.provenance?.listResourceVersion === marker?.rv;
  if (marker && !ownList) {
    warnings.push(
      `${label} was absent from the baseline listed at ${new Date(marker.observed_at).toISOString()}; it was deleted during a gap`,
    );
    return { record: null, exists: false, warnings, inGap, prunedBefore };
  }
  return { record, exists: true, warnings, inGap, prunedBefore };
}

/** An object's newest record observed at or before a time. */
export function latestAtTime(store: Store, objectId: number, atMs: number): RecordRow | undefined {
  const stmt = store.sql.prep(
    `SELECT ${COLS} FROM records WHERE ${OBJECT_BUCKET}=? AND object=? AND observed_at<=? ORDER BY seq DESC LIMIT 1`,
  );
  return store.buckets.newest(
    Number.MAX_SAFE_INTEGER,
    b => stmt.get(b, objectId, atMs) as RecordRow | undefined,
    atMs,
  );
}

/** Last position in a stream carrying rv: the object's own rows and control rows are indexed; others need a scan. */
function rvPosition(
  store: Store,
  ids: number[],
  stream: number,
  rv: string,
): { seq: number | null } {
  let own: number | null = null;
  if (ids.length > 0) {
    const ownStmt = store.sql.prep(
      `SELECT max(seq) AS seq FROM records WHERE ${OBJECT_BUCKET}=? AND object IN (${ids.map(() => "?").join(",")}) AND stream=? AND rv=?`,
    );
    own =
      store.buckets.newest(
        Number.MAX_SAFE_INTEGER,
        b => (ownStmt.get(b, ...ids, stream, rv) as { seq: number | null }).seq ?? undefined,
      ) ?? null;
  }
  const ctl = store.sql
    .prep("SELECT max(seq) AS seq FROM records WHERE object IS NULL AND stream=? AND rv=?")
    .get(stream, rv) as { seq: number | null };
  const best = Math.max(own ?? 0, ctl.seq ?? 0);
  if (best > 0) return { seq: best };
  // The RV belongs to some other object of the stream: rare, so an unindexed scan is acceptable.
  return store.sql
    .prep("SELECT max(seq) AS seq FROM records WHERE stream=? AND rv=?")
    .get(stream, rv) as {
    seq: number | null;
  };
}
