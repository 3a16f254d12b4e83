import type { BaselineMark, ObjectAtResult, ObjectSelector, PointInTime } from "../types";
import { JournalError } from "../types";
import { decodeRow } from "../store/rows";
import { OBJECT_BUCKET } from "../store/schema";
import type { RecordRow, Store } from "../store/store";
import { ROW_COLS } from "./columns";
import { downWindows } from "./down-windows";
import { gapWindows } from "./gaps";
import { absenceOf, latestAtTime } from "./positions";
import { objectIds } from "./history";

/**
 * The facts about an object at a time or at a resource version of one stream: its record, whether
 * it existed, the gaps over the point and the prune horizon. Wording for people is materialize's.
 */
export function objectAt(
  store: Store,
  sel: ObjectSelector,
  at: PointInTime,
  prunedHorizon: string | null,
  marksOf: (streamId: string) => readonly BaselineMark[],
): ObjectAtResult {
  store.registry.refreshStreams();
  const ids = objectIds(store, sel);
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
      return {
        record: null,
        exists: false,
        absence: null,
        gaps: [],
        downWindows: [],
        streamId: null,
        inGap: false,
        prunedBefore: prunedHorizon,
        matchingGroups: ids.length,
        rvNotRecorded: true,
      };
    }
    const posRow = store.sql.prep("SELECT observed_at FROM records WHERE seq=?").get(pos.seq) as {
      observed_at: number;
    };
    pointMs = posRow.observed_at;
    const stmt = store.sql.prep(
      `SELECT ${ROW_COLS} FROM records WHERE ${OBJECT_BUCKET}=? AND object=? AND stream=? AND seq<=? ORDER BY seq DESC LIMIT 1`,
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
  const prunedBefore = prunedHorizon && pointMs < Date.parse(prunedHorizon) ? prunedHorizon : null;
  const streamId = row ? store.registry.streamOf(row.stream, row.seq).streamId : undefined;
  const point = { fromMs: pointMs, toMs: pointMs };
  const gaps = gapWindows(store, streamId, point);
  const base = {
    gaps,
    downWindows: downWindows(store, streamId, point),
    streamId: streamId ?? null,
    inGap: gaps.length > 0,
    prunedBefore,
    matchingGroups: ids.length,
    rvNotRecorded: false,
  };
  if (!row) return { record: null, exists: false, absence: null, ...base };
  const absence = absenceOf(row, marksOf(streamId!), pointMs);
  if (absence) return { record: null, exists: false, absence, ...base };
  return { record: decodeRow(store, row), exists: true, absence: null, ...base };
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
