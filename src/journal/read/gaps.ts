import type { JournalRecord } from "../../event";
import { TYPE_CODES } from "../store/schema";
import type { Store } from "../store/store";
import type { GapWindow, TimeRange } from "../types";
import { controlRecords } from "./history";

const BASELINE = TYPE_CODES.indexOf("baseline");

/**
 * Whether a window overlaps a range. Both ends are exclusive: the last good record and the relist
 * are known moments, so a point exactly on either is not inside the gap.
 */
export function overlaps(w: GapWindow, r: TimeRange): boolean {
  return w.fromMs < r.toMs && (w.toMs === null || w.toMs > r.fromMs);
}

/**
 * GAP records of a stream (or all streams) with their windows: each starts where continuity was last
 * proven, at the stream's record of the GAP's last good resourceVersion, and ends at the first
 * baseline after it, which also resolves the record. Records written between the two (a coverage
 * change after a 403, an ERROR event) prove nothing, so they never move the start.
 */
export function gapsWithWindows(
  store: Store,
  streamId?: string,
): { record: JournalRecord; window: GapWindow }[] {
  const gaps = controlRecords(store, "gap", streamId);
  if (gaps.length === 0) return [];
  const markerAfter = store.sql.prep(
    "SELECT observed_at, rv FROM records WHERE object IS NULL AND type=? AND stream=? AND seq>? ORDER BY seq LIMIT 1",
  );
  // The stream's last baseline marker before the GAP (indexed): the last good RV is at or after it,
  // so the search below never scans further back than the stream's last relist.
  const markerBefore = store.sql.prep(
    "SELECT seq, observed_at FROM records WHERE object IS NULL AND type=? AND stream=? AND seq<? ORDER BY seq DESC LIMIT 1",
  );
  // The record that made the last good RV durable: an event, a baseline marker or a checkpoint.
  const lastGood = store.sql.prep(
    "SELECT observed_at FROM records WHERE seq>=? AND seq<? AND stream=? AND rv=? ORDER BY seq DESC LIMIT 1",
  );
  // Without a durable position nothing on the stream was ever proven: from its first record.
  const first = store.sql.prep(
    "SELECT observed_at FROM records WHERE stream=? AND seq<? ORDER BY seq LIMIT 1",
  );
  const startOf = (streamRow: number, gapSeq: number, rv: string): number | null => {
    if (rv === "") {
      const f = first.get(streamRow, gapSeq) as { observed_at: number } | undefined;
      return f?.observed_at ?? null;
    }
    const mk = markerBefore.get(BASELINE, streamRow, gapSeq) as
      | { seq: number; observed_at: number }
      | undefined;
    const b = lastGood.get(mk?.seq ?? 0, gapSeq, streamRow, rv) as
      | { observed_at: number }
      | undefined;
    // An RV the journal does not hold (pruned, or a journal restored from an older copy): the last
    // relist is the last point continuity is known from.
    return b?.observed_at ?? mk?.observed_at ?? null;
  };
  return gaps.map(g => {
    const s = store.registry.streamsById.get(g.streamId)!;
    const seq = g.ingestSeq!;
    const m = markerAfter.get(BASELINE, s.id, seq) as
      | { observed_at: number; rv: string }
      | undefined;
    const from = startOf(s.id, seq, g.gap?.lastGoodResourceVersion ?? "");
    const record: JournalRecord = m ? { ...g, gap: { ...g.gap!, resolvedByBaselineRv: m.rv } } : g;
    return {
      record,
      window: {
        streamId: g.streamId,
        gapSeq: seq,
        fromMs: from ?? Date.parse(g.observedAt),
        toMs: m ? m.observed_at : null,
        reason: g.gap?.reason ?? "unknown",
        lastGoodResourceVersion: g.gap?.lastGoodResourceVersion ?? "",
        resolvedByBaselineRv: m?.rv ?? null,
      },
    };
  });
}

/** Gap windows of a stream (or all streams), optionally only those overlapping a range. */
export function gapWindows(store: Store, streamId?: string, during?: TimeRange): GapWindow[] {
  const all = gapsWithWindows(store, streamId).map(g => g.window);
  return during ? all.filter(w => overlaps(w, during)) : all;
}
