import { ApiError, NetworkError } from "../kube/errors";
import { backoffDelay, type BackoffBounds } from "./backoff";

/** Why a list or watch ended. */
export type Failure =
  | { kind: "gone"; message: string }
  | { kind: "http"; status: number; reason: string; message: string; retryAfterMs?: number }
  | { kind: "network"; message: string }
  | { kind: "malformed"; message: string }
  | { kind: "stalled"; message: string }
  | { kind: "closed"; message: string }
  | { kind: "journal"; message: string };

/** What the stream does next. */
export type Action =
  | { do: "relist"; gapReason: string }
  | { do: "reconnect"; delayMs: number; reason: string }
  | { do: "unavailable"; delayMs: number; status: number; reason: string };

export interface DecideOptions {
  backoff: BackoffBounds;
  /** Longest delay between probes while access is denied or the resource is gone. */
  slowRetryMs: number;
}

/** Consecutive failures of a stream, and how many of the newest were access denials (403/404). */
export interface Attempts {
  failures: number;
  denials: number;
}

const denied = (f: Failure) => f.kind === "http" && (f.status === 403 || f.status === 404);

/**
 * The attempt number decide() backs off from. Denials count on their own: after an API-server
 * restart the outage piles up network failures, and if the first 403 from the restarted server's
 * empty RBAC cache inherited them it would wait the full slow retry instead of probing quickly.
 */
export function attemptFor(f: Failure, a: Attempts): number {
  return denied(f) ? a.denials : a.failures;
}

/** The counts after failure f (a healthy watch in between resets them to zero). */
export function countFailure(f: Failure, a: Attempts): Attempts {
  return {
    failures: f.kind === "closed" ? a.failures : a.failures + 1,
    denials: denied(f) ? a.denials + 1 : 0,
  };
}

/** A line the stream could not parse; the stream reconnects from its last durable RV. */
export class MalformedLineError extends Error {
  constructor(
    message: string,
    /** The line's length: never its text, which can carry a Secret's values. */
    readonly bytes: number,
  ) {
    super(message);
    this.name = "MalformedLineError";
  }
}

/** No bytes arrived within the silence limit. */
export class StalledError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StalledError";
  }
}

/** A journal append failed; the records were not committed. */
export class SinkError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "SinkError";
  }
}

/** Maps anything a list or watch threw onto a Failure. */
export function classify(err: unknown): Failure {
  if (err instanceof ApiError) {
    if (err.status === 410) return { kind: "gone", message: err.message };
    // When a compaction lands on the very revision a watch resumes from, etcd has no previous
    // value and the API server answers 500 "PrevKv=nil" instead of 410: continuity is just as lost.
    if (err.status === 500 && /PrevKv=nil/i.test(err.message)) {
      return { kind: "gone", message: err.message };
    }
    return {
      kind: "http",
      status: err.status,
      reason: err.reason,
      message: err.message,
      retryAfterMs: err.retryAfterMs,
    };
  }
  if (err instanceof MalformedLineError) return { kind: "malformed", message: err.message };
  if (err instanceof StalledError) return { kind: "stalled", message: err.message };
  if (err instanceof SinkError) return { kind: "journal", message: err.message };
  if (err instanceof NetworkError) return { kind: "network", message: err.message };
  const msg = err instanceof Error ? err.message : String(err);
  return { kind: "network", message: msg };
}

/** Decides the next step after a failure; `attempt` counts failures since the last healthy watch. */
export function decide(
  f: Failure,
  attempt: number,
  o: DecideOptions,
  random: () => number,
): Action {
  switch (f.kind) {
    case "gone":
      return { do: "relist", gapReason: `410 Gone: ${f.message}` };
    case "closed":
      // The server ended a healthy watch (timeoutSeconds); resume at once.
      return { do: "reconnect", delayMs: 0, reason: "watch closed by server" };
    case "http":
      if (f.status === 403 || f.status === 404) {
        // Right after an API-server start its RBAC cache is empty and answers 403 for a moment, so
        // probe quickly at first and slow down to slowRetryMs while access stays denied.
        return {
          do: "unavailable",
          delayMs: backoffDelay(attempt, { minMs: o.backoff.minMs, maxMs: o.slowRetryMs }, random),
          status: f.status,
          reason: `${f.status} ${f.reason}`,
        };
      }
      if (f.status === 429 && f.retryAfterMs !== undefined) {
        return {
          do: "reconnect",
          delayMs: Math.max(0, f.retryAfterMs),
          reason: `429 Retry-After ${f.retryAfterMs} ms`,
        };
      }
      return {
        do: "reconnect",
        delayMs: backoffDelay(attempt, o.backoff, random),
        reason: `${f.status} ${f.reason}`,
      };
    default:
      return {
        do: "reconnect",
        delayMs: backoffDelay(attempt, o.backoff, random),
        reason: `${f.kind}: ${f.message}`,
      };
  }
}
