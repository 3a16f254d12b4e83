// Stream health: lag, last event, events per second and relists. Events per second are counted from
// the journal's own records over a window (cursor pages of GET /v1/events), not estimated.
import type { StreamReport } from "./coverage-model";

export interface HealthRow {
  streamId: string;
  state: string;
  lagSeconds: number | null;
  lastObservedAt: string | null;
  lastResourceVersion: string | null;
  /** null: not counted (no window). */
  eventsPerSecond: number | null;
  /** The count hit the page limit: the rate is at least this. */
  atLeast: boolean;
  /** Each closed or open gap is a reconnect that lost history and re-listed. */
  relists: number;
  openGaps: number;
  downWindows: number;
}

export interface RateWindow {
  /** Records per stream observed in the window. */
  counts: Map<string, number>;
  seconds: number;
  truncated: boolean;
}

/** Counts records per stream. */
export function countByStream(records: { streamId: string }[], into = new Map<string, number>()) {
  for (const r of records) into.set(r.streamId, (into.get(r.streamId) ?? 0) + 1);
  return into;
}

export function healthRows(streams: StreamReport[], rates: RateWindow | null): HealthRow[] {
  return streams.map(s => {
    const n = rates?.counts.get(s.streamId) ?? 0;
    return {
      streamId: s.streamId,
      state: s.state,
      lagSeconds: s.lagSeconds,
      lastObservedAt: s.lastObservedAt,
      lastResourceVersion: s.lastResourceVersion,
      eventsPerSecond: rates ? round2(n / rates.seconds) : null,
      atLeast: rates?.truncated ?? false,
      relists: s.gaps.length,
      openGaps: s.openGaps,
      downWindows: s.downWindows?.length ?? 0,
    };
  });
}

/** Seconds as people read them: 0.4 s, 12 s, 3 min 5 s, 2 h 1 min; null is "unknown". */
export function formatSeconds(s: number | null): string {
  if (s === null || !Number.isFinite(s)) return "unknown";
  if (s < 10) return `${round2(s)} s`;
  if (s < 60) return `${Math.round(s)} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

/** The window's start for a window of `seconds` ending at `endMs`, as ISO. */
export function windowStart(endMs: number, seconds: number): string {
  return new Date(endMs - seconds * 1000).toISOString();
}

/** A window length from a URL parameter: 10 s to 1 day, default 5 minutes. */
export function windowSeconds(v: string | undefined): number {
  const n = Number(v);
  return Number.isInteger(n) && n >= 10 && n <= 86_400 ? n : 300;
}

function round2(v: number): number {
  return Math.round(v * 100) / 100;
}
