/** Bounds of the reconnect delay. */
export interface BackoffBounds {
  minMs: number;
  maxMs: number;
}

/** Exponential backoff with equal jitter: half fixed, half random, so retries spread but still grow. */
export function backoffDelay(attempt: number, b: BackoffBounds, random: () => number): number {
  const exp = Math.min(b.maxMs, b.minMs * 2 ** Math.min(Math.max(0, attempt), 30));
  const half = exp / 2;
  return Math.round(Math.min(b.maxMs, Math.max(b.minMs, half + random() * half)));
}

/** A watch timeout spread over [min, max] so many streams do not reconnect in lockstep. */
export function randomTimeoutSeconds(min: number, max: number, random: () => number): number {
  return Math.floor(min + random() * (max - min + 1));
}
