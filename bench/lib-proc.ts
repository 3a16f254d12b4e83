// Small measuring helpers of the benchmarks: memory and CPU of a process from /proc, the machine's
// CPU from /proc/stat, percentiles and a least-squares slope.
import { readFileSync } from "node:fs";

export const sleep = (ms: number) => new Promise(r => setTimeout(r, ms));

/** The p-th percentile of an ascending array (NaN when empty). */
export const pct = (sorted: number[], p: number) =>
  sorted.length === 0
    ? Number.NaN
    : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

/** The median: the middle value, or the mean of the two middle values of an even count (NaN when empty). */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length === 0 ? Number.NaN : s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** RSS and its high-water mark of a process, MiB. */
export function mem(pid: number): { rss: number; hwm: number } {
  const s = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(s)?.[1] ?? 0);
  return { rss: kb("VmRSS") / 1024, hwm: kb("VmHWM") / 1024 };
}

/** CPU time (user + system, every thread) a process has used so far, in ms; NaN once it is gone. */
export function cpuMs(pid: number): number {
  let f: string;
  try {
    f = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return Number.NaN;
  }
  const after = f.slice(f.lastIndexOf(")") + 2).split(" ");
  // Fields 14 and 15 (utime, stime) are the 12th and 13th after the command; clock ticks of 10 ms.
  return (Number(after[11]) + Number(after[12])) * 10;
}

/** The machine's CPU so far, ms summed over its cores: busy (user, nice, system, irq), idle, iowait. */
export function machineCpuMs(): { busy: number; idle: number; iowait: number } {
  const line = readFileSync("/proc/stat", "utf8").split("\n", 1)[0];
  const t = line.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal (guest time is already inside user)
  const [user, nice, system, idle, iowait, irq, softirq, steal] = t;
  return {
    busy: (user + nice + system + irq + softirq + steal) * 10,
    idle: idle * 10,
    iowait: iowait * 10,
  };
}

/** Least-squares slope of y over x. */
export function slope(xs: number[], ys: number[]): number {
  const n = xs.length;
  if (n < 2) return 0;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += (xs[i] - mx) * (ys[i] - my);
    den += (xs[i] - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

/** The target column of a row: whether the figure meets its target, then the target. */
export const verdict = (ok: boolean, target: string): string =>
  `${ok ? "MET" : "not met"}: ${target}`;

/** Prints one row of a benchmark's table: figure, value, target or note. */
export type Row = (k: string, v: string, target?: string) => void;
