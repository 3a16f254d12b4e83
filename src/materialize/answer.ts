import type { DownWindow, GapWindow } from "../journal";

/** A gap as answers show it: one stream's unknown stretch, in ISO time. */
export interface GapInfo {
  streamId: string;
  from: string;
  /** When the relist that closed it was taken; null while it is open. */
  to: string | null;
  reason: string;
}

/**
 * A stretch in which the recorder was down and a stream then resumed from its checkpoint: nothing
 * was lost, but changes in it were observed late, so the times shown are not the times of change.
 */
export interface DownWindowInfo {
  streamId: string;
  /** The stream's last durable checkpoint (or heartbeat) before the downtime. */
  from: string;
  /** The resume. */
  to: string;
}

/** A stream that was not being recorded at the answer's point, and why. */
export interface UnrecordedInfo {
  streamId: string;
  /** "stopped": krply stopped recording it; "unavailable": the server refused it. */
  state: "stopped" | "unavailable";
  reason: string;
}

/** What is known about the history an answer rests on. */
export interface Coverage {
  /** True only when nothing the answer depends on is unknown. */
  complete: boolean;
  /** Gaps that touch the answer. */
  gaps: GapInfo[];
  /** Recorder down windows that touch the answer (their changes were observed late). */
  downWindows: DownWindowInfo[];
  /** Streams the answer rests on that were not being recorded at its point. */
  unrecorded: UnrecordedInfo[];
  /** Set when the answer reaches back before retention's horizon. */
  prunedBefore: string | null;
}

/**
 * The one shape of every historical answer: the data, what is known about the history behind it,
 * and the warnings for people. The CLI, the API and the UI all render this.
 */
export interface Answer<T> {
  data: T;
  coverage: Coverage;
  warnings: string[];
}

const iso = (ms: number): string => new Date(ms).toISOString();

/** A gap window as answers show it. */
export function gapInfo(w: GapWindow): GapInfo {
  return {
    streamId: w.streamId,
    from: iso(w.fromMs),
    to: w.toMs === null ? null : iso(w.toMs),
    reason: w.reason,
  };
}

/** A down window as answers show it. */
export function downWindowInfo(w: DownWindow): DownWindowInfo {
  return { streamId: w.streamId, from: iso(w.fromMs), to: iso(w.toMs) };
}

/** What else an answer's coverage rests on besides gaps and pruning. */
export interface CoverageExtras {
  downWindows?: readonly DownWindow[];
  unrecorded?: readonly UnrecordedInfo[];
}

/**
 * Coverage of an answer: complete when no gap or down window touches it, every stream it rests on
 * was being recorded, nothing it needs was pruned, and the caller found nothing else missing (a
 * stream without a baseline, an unavailable stream).
 */
export function coverageOf(
  gaps: readonly GapWindow[],
  prunedBefore: string | null,
  otherwiseComplete = true,
  extras: CoverageExtras = {},
): Coverage {
  const seen = new Set<string>();
  const unique = gaps.filter(g => {
    const k = `${g.streamId}\u0000${g.gapSeq}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
  const seenDown = new Set<string>();
  const down = (extras.downWindows ?? []).filter(w => {
    const k = `${w.streamId}\u0000${w.seq}`;
    if (seenDown.has(k)) return false;
    seenDown.add(k);
    return true;
  });
  const unrecorded = [...(extras.unrecorded ?? [])];
  return {
    complete:
      otherwiseComplete &&
      unique.length === 0 &&
      down.length === 0 &&
      unrecorded.length === 0 &&
      prunedBefore === null,
    gaps: unique.map(gapInfo),
    downWindows: down.map(downWindowInfo),
    unrecorded,
    prunedBefore,
  };
}

/** Builds an answer. */
export function answer<T>(data: T, coverage: Coverage, warnings: string[]): Answer<T> {
  return { data, coverage, warnings };
}

const uniqueBy = <T>(xs: T[]): T[] => {
  const seen = new Set<string>();
  return xs.filter(x => {
    const k = JSON.stringify(x);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
};

/**
 * Pages of one answer laid end to end as one answer: the data in page order, each gap, down
 * window, unrecorded stream and warning once, complete only when every page was.
 */
export function joinPages<T>(pages: readonly Answer<T[]>[]): Answer<T[]> {
  const covs = pages.map(p => p.coverage);
  return {
    data: pages.flatMap(p => p.data),
    coverage: {
      complete: covs.every(c => c.complete),
      gaps: uniqueBy(covs.flatMap(c => c.gaps)),
      downWindows: uniqueBy(covs.flatMap(c => c.downWindows)),
      unrecorded: uniqueBy(covs.flatMap(c => c.unrecorded)),
      prunedBefore: covs.find(c => c.prunedBefore !== null)?.prunedBefore ?? null,
    },
    warnings: [...new Set(pages.flatMap(p => p.warnings))],
  };
}
