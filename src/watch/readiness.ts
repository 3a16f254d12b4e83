import type { StreamStatus } from "./types";

/** How many names a reason lists before it says "and N more": a probe body stays small. */
const NAMES_SHOWN = 5;

/** Where the recorder's streams stand, for readiness. */
export interface StreamReadiness {
  /** Streams the recorder runs (stopped ones excluded). */
  total: number;
  /** Streams holding a baseline they resume from. */
  baselined: number;
  /** Streams still listing for their first (or, after a gap, next) baseline. */
  waiting: string[];
  /** Streams the API server refuses (RBAC revoked, resource gone): recording there has stopped. */
  unavailable: string[];
}

/** The parts of the recorder's health that decide readiness. */
export interface ReadinessInput {
  state: "starting" | "retrying" | "running" | "refused" | "stopped";
  failedStarts: number;
  journalOpenFailures: number;
  lastError: string | null;
  journal: { open: boolean; appendError: string | null };
  streams: StreamReadiness;
}

/** Sums the streams' statuses up for readiness. */
export function streamReadiness(streams: readonly StreamStatus[]): StreamReadiness {
  const live = streams.filter(s => s.phase !== "stopped");
  return {
    total: live.length,
    baselined: live.filter(s => s.baselined).length,
    waiting: live.filter(s => !s.baselined && s.phase !== "unavailable").map(s => s.streamId),
    unavailable: live.filter(s => s.phase === "unavailable").map(s => s.streamId),
  };
}

function names(ids: string[]): string {
  const more = ids.length - NAMES_SHOWN;
  return ids.slice(0, NAMES_SHOWN).join(", ") + (more > 0 ? ` and ${more} more` : "");
}

/**
 * Why the recorder is not ready; empty when it is. Ready means: it runs, the journal is open and its
 * newest append committed, and every selected stream holds a baseline and is readable. A stream that
 * reconnects after a baseline stays ready: its next watch resumes from the checkpoint, and a gap it
 * meets is recorded, not hidden.
 */
export function notReadyReasons(h: ReadinessInput): string[] {
  const last = h.lastError ? `: ${h.lastError}` : "";
  switch (h.state) {
    case "starting":
      return h.journalOpenFailures > 0
        ? [`the journal cannot be opened (${h.journalOpenFailures} attempts)${last}`]
        : ["the recorder is starting"];
    case "retrying":
      return [`start attempt ${h.failedStarts} failed; retrying${last}`];
    case "refused":
      return [`the journal is refused; nothing is recorded until it is repaired${last}`];
    case "stopped":
      return ["the recorder stopped"];
    case "running":
      break;
  }
  const reasons: string[] = [];
  if (!h.journal.open) reasons.push("the journal is not open");
  if (h.journal.appendError)
    reasons.push(`the newest journal append failed: ${h.journal.appendError}`);
  const s = h.streams;
  if (s.unavailable.length > 0) {
    reasons.push(
      `${s.unavailable.length} of ${s.total} streams are refused by the API server: ${names(s.unavailable)}`,
    );
  }
  if (s.waiting.length > 0) {
    reasons.push(
      `${s.waiting.length} of ${s.total} streams have no baseline yet: ${names(s.waiting)}`,
    );
  }
  return reasons;
}
