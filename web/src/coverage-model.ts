// The Coverage view's matrix: one row per stream, its state in columns, and the windows its time strip
// marks. Built from GET /v1/streams (every gap and down window a stream ever had) and GET
// /v1/coverage (whether each stream is trustworthy at the chosen time).
import type { StreamCoverage } from "../../src/materialize";
import type { DownInfo, GapInfo } from "./api-client";

/** A stream as GET /v1/streams reports it (fields this view reads). */
export interface StreamReport {
  streamId: string;
  key: Record<string, string>;
  lastResourceVersion: string | null;
  lastObservedAt: string | null;
  baselinePresent: boolean;
  openGaps: number;
  state: string;
  gaps: GapInfo[];
  /** Absent from sidecars that predate down windows in stream reports. */
  downWindows?: DownInfo[];
  lagSeconds: number | null;
}

/** A stream at a time, as GET /v1/coverage reports it: materialize's own type (erased in the build). */
export type { StreamCoverage };

export interface CoverageRow {
  streamId: string;
  /** "deployments.apps" style, as people read resources. */
  resource: string;
  namespace: string;
  state: string;
  baseline: boolean;
  openGaps: number;
  gaps: GapInfo[];
  down: DownInfo[];
  unavailable: boolean;
  degraded: boolean;
  /** Trustworthy at the chosen time; null when the coverage answer did not list the stream. */
  completeAt: boolean | null;
  reasons: string[];
  watermark: string | null;
}

export function resourceLabel(key: Record<string, string>): string {
  const r = key.resource ?? "?";
  return key.group ? `${r}.${key.group}` : r;
}

/** One row per stream, sorted so the ones needing attention come first, then by resource. */
export function coverageRows(streams: StreamReport[], at: StreamCoverage[]): CoverageRow[] {
  const byId = new Map(at.map(s => [s.streamId, s]));
  const rows = streams.map((s): CoverageRow => {
    const c = byId.get(s.streamId);
    return {
      streamId: s.streamId,
      resource: resourceLabel(s.key),
      namespace: s.key.namespace || "(all)",
      state: s.state,
      baseline: s.baselinePresent,
      openGaps: s.openGaps,
      gaps: s.gaps,
      down: s.downWindows ?? [],
      unavailable: s.state === "unavailable" || (c ? !c.available : false),
      degraded: s.state === "degraded",
      completeAt: c ? c.complete : null,
      reasons: c?.reasons ?? [],
      watermark: c?.watermark ?? s.lastResourceVersion,
    };
  });
  return rows.sort(
    (a, b) =>
      attention(b) - attention(a) ||
      a.resource.localeCompare(b.resource) ||
      a.namespace.localeCompare(b.namespace),
  );
}

/** How much a row needs a look: incomplete, unavailable, open gaps, then any past window. */
function attention(r: CoverageRow): number {
  return (
    (r.completeAt === false ? 8 : 0) +
    (r.unavailable || !r.baseline ? 4 : 0) +
    (r.openGaps > 0 ? 2 : 0) +
    (r.gaps.length + r.down.length > 0 ? 1 : 0)
  );
}

/** Counts for the summary line above the matrix. */
export function coverageSummary(rows: CoverageRow[]) {
  return {
    streams: rows.length,
    incomplete: rows.filter(r => r.completeAt === false).length,
    withGaps: rows.filter(r => r.gaps.length > 0).length,
    withDown: rows.filter(r => r.down.length > 0).length,
    unavailable: rows.filter(r => r.unavailable).length,
  };
}

/** The times a strip must reach back to: every window's start and the streams' last records. */
export function stripTimes(rows: CoverageRow[], extra: (string | null)[] = []): (string | null)[] {
  return [...rows.flatMap(r => [...r.gaps.map(g => g.from), ...r.down.map(d => d.from)]), ...extra];
}
