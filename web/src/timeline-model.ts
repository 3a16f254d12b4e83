// The Object timeline: the object's versions (each with its RV and the time krply OBSERVED it, never
// called the time of change), with gap, recorder down-window and pruned markers placed in order among
// them; the server pages them, so a history of 10,000 versions renders a page at a time.
import type { Actor, AttributedChange, TimelineEntry } from "../../src/materialize";
import type { Coverage } from "./api-client";

export type { Actor };

/**
 * A field change as GET /v1/objects/.../history and GET /v1/diff send it: materialize's
 * AttributedChange (erased in the build), of which the UI needs only the path and values.
 */
export type FieldChange = Pick<AttributedChange, "path" | "before" | "after"> &
  Partial<Pick<AttributedChange, "added" | "removed" | "managers">>;

/**
 * An entry of GET /v1/objects/{kind}/{name}/history: materialize's TimelineEntry, whose actor a
 * sidecar from before actors may leave out.
 */
export type HistoryEntry = Omit<TimelineEntry, "changes" | "actor"> & {
  changes: FieldChange[];
  actor?: Actor | null;
};

export type TimelineItem =
  | { kind: "version"; entry: HistoryEntry; index: number; previousRv: string | null }
  | { kind: "gap"; entry: HistoryEntry; from: string; to: string | null; reason: string }
  | { kind: "down"; streamId: string; from: string; to: string }
  | { kind: "pruned"; before: string };

/** A page of GET /v1/objects/{kind}/{name}/history: oldest first, with cursors to its neighbours. */
export interface HistoryPage {
  entries: HistoryEntry[];
  nextCursor: string | null;
  previousCursor: string | null;
  /** Versions before this page. */
  start: number;
  /** Versions in all. */
  total: number;
}

/** Versions a timeline page asks for. */
export const TIMELINE_PAGE = 200;

/** Who is behind a change, as one line: the audit user, or the field manager, or why unknown. */
export function actorText(a: Actor | null | undefined, manager: string | null): string {
  if (!a) return manager ? `field manager ${manager}` : "unknown";
  if (a.source === "audit")
    return `user ${a.user}${a.impersonatedUser ? ` as ${a.impersonatedUser}` : ""} (audit, ${a.verb})`;
  if (a.source === "managedFields")
    return `field manager ${a.manager} (${a.operation}${a.subresource ? ` ${a.subresource}` : ""})`;
  return `unknown: ${a.reason}`;
}

/** Field managers named for one field change, or null when none is recorded. */
export function fieldManagers(c: FieldChange): string | null {
  if (!c.managers || c.managers.length === 0) return null;
  return c.managers
    .map(m => `${m.manager} (${m.operation}${m.basis === "exact" ? "" : `, ${m.basis}`})`)
    .join(", ");
}

// A gap entry's note reads "unknown until <to>: <reason>" (materialize's timeline).
function gapWindow(e: HistoryEntry, coverage: Coverage): { to: string | null; reason: string } {
  const g = coverage.gaps.find(
    x =>
      x.streamId === e.streamId &&
      x.from <= e.observedAt &&
      (x.to === null || x.to >= e.observedAt),
  );
  if (g) return { to: g.to, reason: g.reason };
  const m = /^unknown until (\S+): (.*)$/.exec(e.note ?? "");
  return m ? { to: m[1], reason: m[2] } : { to: null, reason: e.note ?? "gap" };
}

/**
 * Versions and gaps in the order observed, with each down window placed at its start and the pruned
 * horizon first. A marker sorts after versions observed at its start: a window starts at the last
 * thing known (the last good RV, the last checkpoint), so what was seen at that instant precedes it.
 */
export function timelineItems(history: HistoryEntry[], coverage: Coverage): TimelineItem[] {
  const items: { at: string; order: number; item: TimelineItem }[] = [];
  let previousRv: string | null = null;
  let index = 0;
  for (const e of history) {
    if (e.kind === "gap") {
      const w = gapWindow(e, coverage);
      items.push({
        at: e.observedAt,
        order: 1,
        item: { kind: "gap", entry: e, from: e.observedAt, ...w },
      });
      continue;
    }
    items.push({
      at: e.observedAt,
      order: 0,
      item: { kind: "version", entry: e, index: index++, previousRv },
    });
    previousRv = e.resourceVersion;
  }
  const streams = new Set(history.map(e => e.streamId));
  for (const d of coverage.downWindows) {
    if (streams.size > 0 && !streams.has(d.streamId)) continue;
    items.push({
      at: d.from,
      order: 1,
      item: { kind: "down", streamId: d.streamId, from: d.from, to: d.to },
    });
  }
  // A stable sort keeps the server's order of versions observed at the same instant.
  const sorted = items
    .map((x, i) => ({ ...x, i }))
    .sort((a, b) => cmp(Date.parse(a.at), Date.parse(b.at)) || a.order - b.order || a.i - b.i)
    .map(x => x.item);
  return coverage.prunedBefore
    ? [{ kind: "pruned", before: coverage.prunedBefore }, ...sorted]
    : sorted;
}

function cmp(a: number, b: number): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A value of a field change as one short line. */
export function valueText(v: unknown): string {
  if (v === undefined) return "(absent)";
  const s = typeof v === "string" ? JSON.stringify(v) : JSON.stringify(v);
  return s.length > 120 ? `${s.slice(0, 117)}…` : s;
}
