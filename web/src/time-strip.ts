// Where gap and down-window markers sit on a stream's time strip. A window is drawn where it is, in
// proportion, but never thinner than a visible sliver: a one-second gap in a day of history is still a
// gap, and hiding it would present partial history as complete.

export type MarkerKind = "gap" | "down" | "pruned";

export interface Window {
  from: string;
  /** null: still open (a gap not yet closed by a relist). */
  to: string | null;
  reason?: string;
}

export interface Marker {
  kind: MarkerKind;
  from: string;
  to: string | null;
  /** Percent of the strip's width from its left edge. */
  left: number;
  width: number;
  /** The window extends past the strip's right edge (open, or after its end). */
  open: boolean;
  label: string;
}

export interface Range {
  fromMs: number;
  toMs: number;
}

/** The thinnest a marker is drawn, in percent of the strip. */
export const MIN_WIDTH = 0.6;

const ms = (iso: string) => Date.parse(iso);

/** The strip's range: from the earliest time given to the end (e.g. now or the chosen `at`). */
export function stripRange(times: (string | null | undefined)[], endMs: number): Range {
  let from = endMs;
  for (const t of times) {
    if (!t) continue;
    const v = ms(t);
    if (Number.isFinite(v) && v < from) from = v;
  }
  // A strip of zero length cannot place anything; give it a second (more would squeeze a short
  // history into its right edge).
  if (endMs - from < 1000) from = endMs - 1000;
  return { fromMs: from, toMs: endMs };
}

function describe(kind: MarkerKind, w: Window): string {
  const until = w.to ?? "now (still open)";
  if (kind === "gap") return `gap from ${w.from} to ${until}${w.reason ? ` (${w.reason})` : ""}`;
  if (kind === "down") return `recorder down from ${w.from} to ${until}: changes observed late`;
  return `history pruned before ${w.to ?? w.from}`;
}

/** Markers for windows that overlap the range, left to right; windows outside it are dropped. */
export function placeMarkers(kind: MarkerKind, windows: Window[], range: Range): Marker[] {
  const span = range.toMs - range.fromMs;
  if (!(span > 0)) return [];
  const out: Marker[] = [];
  for (const w of windows) {
    const a = ms(w.from);
    const b = w.to === null ? Infinity : ms(w.to);
    if (!Number.isFinite(a) || Number.isNaN(b)) continue;
    if (b < range.fromMs || a > range.toMs) continue;
    const start = Math.max(a, range.fromMs);
    const end = Math.min(b, range.toMs);
    let left = ((start - range.fromMs) / span) * 100;
    let width = ((end - start) / span) * 100;
    if (width < MIN_WIDTH) {
      width = MIN_WIDTH;
      left = Math.min(left, 100 - MIN_WIDTH);
    }
    out.push({
      kind,
      from: w.from,
      to: w.to,
      left: round(left),
      width: round(width),
      open: b > range.toMs,
      label: describe(kind, w),
    });
  }
  return out.sort((x, y) => x.left - y.left);
}

/** The pruned part of a strip: everything before prunedBefore, as one marker. */
export function prunedMarker(prunedBefore: string | null, range: Range): Marker[] {
  if (!prunedBefore) return [];
  const start = new Date(range.fromMs).toISOString();
  if (ms(prunedBefore) <= range.fromMs) {
    return [
      {
        kind: "pruned",
        from: start,
        to: prunedBefore,
        left: 0,
        width: MIN_WIDTH,
        open: false,
        label: describe("pruned", { from: start, to: prunedBefore }),
      },
    ];
  }
  return placeMarkers("pruned", [{ from: start, to: prunedBefore }], range);
}

function round(v: number): number {
  return Math.round(v * 1000) / 1000;
}
