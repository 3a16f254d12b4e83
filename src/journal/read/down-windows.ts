import type { Store } from "../store/store";
import type { DownWindow, TimeRange } from "../types";
import { controlRecords } from "./history";

/**
 * Recorder down windows of a stream (or all streams), optionally only those overlapping a range.
 * Each comes from the coverage change a stream writes when it resumes from its checkpoint: from
 * the last durable checkpoint before the downtime to the resume. Nothing is lost in one, but the
 * changes made in it were observed, and stamped, when the recorder came back.
 */
export function downWindows(store: Store, streamId?: string, during?: TimeRange): DownWindow[] {
  const out: DownWindow[] = [];
  for (const r of controlRecords(store, "coverage_change", streamId)) {
    const since = r.coverage?.downSince;
    if (!since) continue;
    const w: DownWindow = {
      streamId: r.streamId,
      seq: r.ingestSeq!,
      fromMs: Date.parse(since),
      toMs: Date.parse(r.observedAt),
    };
    // Both ends are exclusive, as for gaps: the checkpoint and the resume are known moments.
    if (during && !(w.fromMs < during.toMs && w.toMs > during.fromMs)) continue;
    out.push(w);
  }
  return out;
}
