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
  // The record that made the last good RV durable: an event, a baseline marker or a checkpoint.
  const lastGood = store.sql.prep(
    "SELECT observed_at FROM records WHERE stream=? AND seq<? AND rv=? ORDER BY seq DESC LIMIT 1",
  );
  // Without a durable position nothing on the stream was ever proven: from its first record.
  const first = store.sql.prep(
    "SELECT observed_at FROM records WHERE stream=? AND seq<? ORDER BY seq LIMIT 1",
  );
  return gaps.map(g => {
    const s = store.registry.streamsById.get(g.streamId)!;
    const seq = g.ingestSeq!;
    const m = markerAfter.get(BASELINE, s.id, seq) as
      | { observed_at: number; rv: string }
      | undefined;
    const rv = g.gap?.lastGoodResourceVersion ?? "";
    const b = (rv === "" ? first.get(s.id, seq) : lastGood.get(s.id, seq, rv)) as
      | { observed_at: number }
      | undefined;
    const record: JournalRecord = m ? { ...g, gap: { ...g.gap!, resolvedByBaselineRv: m.rv } } : g;
    return {
      record,
      window: {
        streamId: g.streamId,
        gapSeq: seq,
        fromMs: b ? b.observed_at : Date.parse(g.observedAt),
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
