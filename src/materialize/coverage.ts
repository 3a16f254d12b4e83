import type { DownWindow, GapWindow, JournalView, ObjectPosition, StreamInfo } from "../journal";
import type { UnrecordedInfo } from "./answer";
import type { StreamCoverage } from "./types";
import { describeDownWindow, describeGap, warn } from "./warnings";

const iso = (ms: number): string => new Date(ms).toISOString();

/** Windows grouped by their stream, in the order given. */
export function byStream<W extends { streamId: string }>(windows: readonly W[]): Map<string, W[]> {
  const out = new Map<string, W[]>();
  for (const w of windows) {
    const list = out.get(w.streamId);
    if (list) list.push(w);
    else out.set(w.streamId, [w]);
  }
  return out;
}

/** Streams of a cluster that hold a namespace's objects ("" streams hold every namespace). */
export function streamsFor(view: JournalView, clusterId: string, namespace?: string): StreamInfo[] {
  return view
    .streams()
    .filter(s => s.key.clusterId === clusterId)
    .filter(
      s => namespace === undefined || s.key.namespace === "" || s.key.namespace === namespace,
    );
}

/**
 * Each stream's watermark and trustworthiness at an instant. Pass the object positions at that
 * instant (positionsAt) for exact watermarks; without them only control rows count.
 */
export function coverageAt(
  view: JournalView,
  streams: StreamInfo[],
  atMs: number,
  positions: readonly ObjectPosition[] = [],
): {
  streams: StreamCoverage[];
  gaps: GapWindow[];
  downWindows: DownWindow[];
  unrecorded: UnrecordedInfo[];
} {
  const at = iso(atMs);
  const allGaps: GapWindow[] = [];
  const allDown: DownWindow[] = [];
  const unrecorded: UnrecordedInfo[] = [];
  const point = { fromMs: atMs, toMs: atMs };
  // One read each of the gaps and down windows at the instant, for every stream at once.
  const gapsOf = byStream(streams.length > 0 ? view.gapWindows(undefined, point) : []);
  const downOf = byStream(streams.length > 0 ? view.downWindows(undefined, point) : []);
  const out = streams.map(s => {
    const pos = view.streamPositionAt(s.streamId, atMs, positions);
    const baselinePresent = view.baselineMarks(s.streamId).some(m => m.observedAtMs <= atMs);
    const gaps = gapsOf.get(s.streamId) ?? [];
    allGaps.push(...gaps);
    const down = downOf.get(s.streamId) ?? [];
    allDown.push(...down);
    const change = view.coverageAt(s.streamId, atMs);
    const available = !change || change.state === "available";
    if (change && change.state !== "available")
      unrecorded.push({ streamId: s.streamId, state: change.state, reason: change.reason });
    const reasons: string[] = [];
    if (!pos) reasons.push(warn.nothingRecordedAt(at));
    if (!baselinePresent) reasons.push(warn.noBaselineAt(at));
    for (const g of gaps) reasons.push(describeGap(g));
    for (const w of down) reasons.push(describeDownWindow(w));
    if (!available)
      reasons.push(
        change!.state === "stopped"
          ? warn.stoppedRecording(change!.reason)
          : warn.notRecordable(change!.reason),
      );
    return {
      streamId: s.streamId,
      watermark: pos?.resourceVersion ?? null,
      watermarkObservedAt: pos?.observedAt ?? null,
      baselinePresent,
      unresolvedGap: gaps.length > 0,
      available,
      complete: reasons.length === 0,
      reasons,
    };
  });
  return { streams: out, gaps: allGaps, downWindows: allDown, unrecorded };
}
