// Diff benchmark: what the journal's diff of a version against its keyframe costs, and why. The same
// pairs (the journal bench's workload) are diffed while the number of distinct pairs in rotation
// grows: one pair repeated is the warm baseline (every branch predicted, every byte in cache); a few
// hundred pairs add branch and inline-cache variety but still fit in the CPU caches; thousands of
// pairs, as the journal's append sees them, also miss the caches. The ratio to the warm baseline
// says how much of the append's diff is the walk itself and how much is memory.
import { diffAgainstKeyframe } from "../src/journal";
import { Workload } from "./lib-kube-workload";
import { wholeFlag } from "./lib-flags";

interface Pair {
  keyframe: unknown;
  next: unknown;
  rv: string;
}

/** Each object's versions paired with the version that came before, as the journal bench writes them. */
function pairsOf(objects: number, events: number): Pair[] {
  const w = new Workload(objects);
  const prev = new Map<string, unknown>();
  const out: Pair[] = [];
  for (let done = 0; done < events; done += 500) {
    for (const r of w.next(500)) {
      if (r.type !== "event" || !r.object) continue;
      const meta = r.object.metadata as { uid: string; resourceVersion: string };
      const before = prev.get(meta.uid);
      if (before) out.push({ keyframe: before, next: r.object, rv: meta.resourceVersion });
      prev.set(meta.uid, r.object);
    }
  }
  return out;
}

/**
 * Mean µs per diff when the pairs are taken `rotation` at a time and each group is diffed `rounds`
 * times over before the next: every row diffs the same pairs equally often, only the working set differs.
 */
function perDiff(pairs: Pair[], rotation: number, rounds: number): number {
  let ns = 0n;
  let n = 0;
  for (let g = 0; g < pairs.length; g += rotation) {
    const group = pairs.slice(g, g + rotation);
    for (let r = 0; r < rounds; r++) {
      for (const p of group) {
        const t0 = process.hrtime.bigint();
        diffAgainstKeyframe(p.keyframe, p.next, p.rv);
        ns += process.hrtime.bigint() - t0;
        n++;
      }
    }
  }
  return Number(ns) / n / 1000;
}

/** Runs the benchmark; flags: --objects N (5000), --events N (100000), --sample N pairs (4096), --rounds N (20). */
export async function main(args: string[]): Promise<void> {
  const objects = wholeFlag(args, "objects", 5000);
  const events = wholeFlag(args, "events", 100_000);
  const sampleSize = wholeFlag(args, "sample", 4096);
  const rounds = wholeFlag(args, "rounds", 20);
  const pairs = pairsOf(objects, events);
  // Pairs spread evenly over the run, so every kind of object and edit is in the sample.
  const step = Math.max(1, Math.floor(pairs.length / sampleSize));
  const sample = pairs.filter((_, i) => i % step === 0).slice(0, sampleSize);
  console.log(
    `objects=${objects} events=${events} pairs=${pairs.length} sample=${sample.length} rounds=${rounds}`,
  );
  // Warm the code first, so the first row does not pay for compilation.
  perDiff(sample, 1, 2);
  const warm = perDiff(sample, 1, rounds);
  const row = (label: string, us: number) =>
    console.log(
      `${label.padEnd(44)} ${us.toFixed(2).padStart(6)} µs/diff  ${(us / warm).toFixed(2)}x the warm pair`,
    );
  row("each pair repeated (warm)", warm);
  for (const k of [8, 64, 256, 1024, sample.length].filter(k => k <= sample.length))
    row(`${k} pairs in rotation`, perDiff(sample, k, rounds));
  row(`all ${pairs.length} pairs once, in append's order`, perDiff(pairs, pairs.length, 1));
}
