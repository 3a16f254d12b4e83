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
 * GAP records of a stream (or all streams) with their windows: each starts at the stream's last
 * record before the GAP and ends at the first baseline after it, which also resolves the record.
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
  const before = store.sql.prep(
    "SELECT observed_at FROM records WHERE stream=? AND seq<? ORDER BY seq DESC LIMIT 1",
  );
  return gaps.map(g => {
    const s = store.registry.streamsById.get(g.streamId)!;
    const seq = g.ingestSeq!;
    const m = markerAfter.get(BASELINE, s.id, seq) as
      | { observed_at: number; rv: string }
      | undefined;
    const b = before.get(s.id, seq) as { observed_at: number } | undefined;
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
