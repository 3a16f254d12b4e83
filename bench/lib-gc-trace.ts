// Reads node's --trace-gc lines from a child's stdout, so bench/scale.ts can tell the recorder's GC
// pauses inside its lag window apart from its other work. A line looks like
// "[pid:0x…]   1234 ms: Scavenge 12.1 (14.0) -> 11.0 (15.0) MB, 1.92 / 0.00 ms  (…) allocation failure;"
// where 1234 is the isolate's age, so a pause's wall time is the spawn time plus it (a few ms early).
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";

export interface GcPause {
  /** Wall time (ms since epoch) the collection started. */
  at: number;
  ms: number;
  kind: string;
}

const LINE =
  /\s(\d+) ms: ([A-Za-z-]+(?: [A-Za-z-]+)*?) [\d.]+ \([\d.]+\) -> [\d.]+ \([\d.]+\) MB, ([\d.]+) \/ /;

/** Collects the GC pauses a child prints; `spawnedAt` is when it was started. */
export function followGcTrace(out: Readable, spawnedAt: number): GcPause[] {
  const pauses: GcPause[] = [];
  createInterface({ input: out }).on("line", line => {
    const m = LINE.exec(line);
    if (m) pauses.push({ at: spawnedAt + Number(m[1]), ms: Number(m[3]), kind: m[2] });
  });
  return pauses;
}

/** Count, total and largest pause of each kind inside [from, to]. */
export function gcSummary(pauses: GcPause[], from: number, to: number): string {
  const by = new Map<string, { n: number; total: number; max: number }>();
  for (const p of pauses) {
    if (p.at < from || p.at > to) continue;
    const b = by.get(p.kind) ?? { n: 0, total: 0, max: 0 };
    b.n++;
    b.total += p.ms;
    b.max = Math.max(b.max, p.ms);
    by.set(p.kind, b);
  }
  if (by.size === 0) return "none";
  return [...by]
    .map(([k, b]) => `${k} ${b.n}x ${b.total.toFixed(0)} ms (max ${b.max.toFixed(0)})`)
    .join(", ");
}
