import type { Journal, StreamInfo } from "../journal/types";
import type { JournalReader, ObjectPosition } from "./reader";
import type { StreamCoverage } from "./types";

/** A stretch of a stream's history that is unknown: from the last good record to the relist. */
export interface GapSpan {
  streamId: string;
  fromMs: number;
  /** When the relist that closed it was taken; null while open. */
  toMs: number | null;
  reason: string;
}

const iso = (ms: number): string => new Date(ms).toISOString();

/** Gap spans of a stream, with their resolution read from the baselines that followed. */
export function gapSpans(journal: Journal, reader: JournalReader, streamId: string): GapSpan[] {
  const marks = reader.baselineMarks(streamId);
  return journal.gaps(streamId).map(g => {
    const seq = g.ingestSeq ?? 0;
    const closing = marks.find(m => m.seq > seq);
    const from = reader.lastObservedBefore(streamId, seq) ?? Date.parse(g.observedAt);
    return {
      streamId,
      fromMs: from,
      toMs: closing ? closing.observedAtMs : null,
      reason: g.gap?.reason ?? "unknown",
    };
  });
}

/** Describes a gap span for a warning. */
export function describeGap(g: GapSpan): string {
  const to = g.toMs === null ? "now (unresolved)" : iso(g.toMs);
  return `stream ${g.streamId} has a gap from ${iso(g.fromMs)} to ${to} (${g.reason}); changes in it are unknown`;
}

/** Does the span cover the instant (exclusive ends: the last good record and the relist are known)? */
export function gapCovers(g: GapSpan, atMs: number, atOrAfterMs = atMs): boolean {
  return g.fromMs < atOrAfterMs && (g.toMs === null || atMs < g.toMs);
}

function availableAt(
  reader: JournalReader,
  streamId: string,
  atMs: number,
): { ok: boolean; reason?: string } {
  const last = reader.lastControlAt(streamId, "coverage_change", atMs)?.c;
  if (!last || last.state === "available") return { ok: true };
  return { ok: false, reason: `not recordable: ${last.reason}` };
}

/** Streams of a cluster that hold a namespace's objects ("" streams hold every namespace). */
export function streamsFor(journal: Journal, clusterId: string, namespace?: string): StreamInfo[] {
  return journal
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
  journal: Journal,
  reader: JournalReader,
  streams: StreamInfo[],
  atMs: number,
  positions: readonly ObjectPosition[] = [],
): { streams: StreamCoverage[]; gaps: GapSpan[] } {
  const at = iso(atMs);
  const allGaps: GapSpan[] = [];
  const out = streams.map(s => {
    const pos = reader.streamPositionAt(s.streamId, atMs, positions);
    const baselinePresent = reader.baselineMarks(s.streamId).some(m => m.observedAtMs <= atMs);
    const gaps = gapSpans(journal, reader, s.streamId).filter(g => gapCovers(g, atMs));
    allGaps.push(...gaps);
    const avail = availableAt(reader, s.streamId, atMs);
    const reasons: string[] = [];
    if (!pos) reasons.push(`nothing recorded at or before ${at}`);
    if (!baselinePresent) reasons.push(`no baseline (complete list) at or before ${at}`);
    for (const g of gaps) reasons.push(describeGap(g));
    if (!avail.ok) reasons.push(avail.reason!);
    return {
      streamId: s.streamId,
      watermark: pos?.resourceVersion ?? null,
      watermarkObservedAt: pos?.observedAt ?? null,
      baselinePresent,
      unresolvedGap: gaps.length > 0,
      available: avail.ok,
      complete: reasons.length === 0,
      reasons,
    };
  });
  return { streams: out, gaps: allGaps };
}
