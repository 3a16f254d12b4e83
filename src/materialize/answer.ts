import type { GapWindow } from "../journal";

/** A gap as answers show it: one stream's unknown stretch, in ISO time. */
export interface GapInfo {
  streamId: string;
  from: string;
  /** When the relist that closed it was taken; null while it is open. */
  to: string | null;
  reason: string;
}

/** What is known about the history an answer rests on. */
export interface Coverage {
  /** True only when nothing the answer depends on is unknown. */
  complete: boolean;
  /** Gaps that touch the answer. */
  gaps: GapInfo[];
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

/**
 * Coverage of an answer: complete when no gap touches it, nothing it needs was pruned, and the
 * caller found nothing else missing (a stream without a baseline, an unavailable stream).
 */
export function coverageOf(
  gaps: readonly GapWindow[],
  prunedBefore: string | null,
  otherwiseComplete = true,
): Coverage {
  const seen = new Set<string>();
  const unique = gaps.filter(g => {
    const k = `${g.streamId}\u0000${g.gapSeq}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
  return {
    complete: otherwiseComplete && unique.length === 0 && prunedBefore === null,
    gaps: unique.map(gapInfo),
    prunedBefore,
  };
}

/** Builds an answer. */
export function answer<T>(data: T, coverage: Coverage, warnings: string[]): Answer<T> {
  return { data, coverage, warnings };
}
