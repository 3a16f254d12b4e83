// The write phases of bench/scale.ts and where the CPU of each goes. Every phase runs the same writers
// for a while; a phase differs only in who watches (nobody, the raw watch client, the recorder, both).
// On this 2-core machine the API server (with its etcd, one process), the bench's writers, the raw
// client and the recorder all share the CPU, so a phase's write rate falls by what the others take:
// each process's CPU is read from /proc/<pid>/stat before and after the phase, the machine's from
// /proc/stat, and lossBreakdown() splits the rate lost against the no-watch ceiling into each
// process's extra CPU per write, plus what the CPU available to them changed (other load on the host).
import type { KubeClient } from "../src/kube/client";
import type { Ack } from "./lib-lag-tracker";
import { cpuMs, machineCpuMs, sleep, verdict, type Row } from "./lib-proc";
import { startWriters, type Target } from "./lib-scale-workload";

/** The processes a phase is charged to; a missing one did not run in it. */
export interface Pids {
  /** The harness: kube-apiserver and its etcd, one process. */
  server: number;
  raw?: number;
  recorder?: number;
}

/** CPU used in a phase, ms (summed over cores). `bench` is this process: the writers, and in the lag
 * window the journal poll and the raw client's arrivals. `other` is the rest of the machine. */
export interface PhaseCpu {
  server: number;
  bench: number;
  raw: number;
  recorder: number;
  other: number;
  idle: number;
  iowait: number;
}

export interface Phase {
  name: string;
  writes: number;
  failures: number;
  elapsedMs: number;
  rate: number;
  cpu: PhaseCpu;
  /**
   * CPU the writes cost (ms): the server's and this process's CPU less what they use at rest (Rest);
   * the raw client's and the recorder's as measured (at rest they use next to nothing).
   */
  work: Record<(typeof OURS)[number], number>;
}

/** What the server and this process use with nobody writing or watching, ms per ms. */
export interface Rest {
  server: number;
  bench: number;
}

const OURS = ["server", "bench", "raw", "recorder"] as const;

/** Starts counting CPU; stop() returns what each process used since. */
export function cpuMeter(pids: Pids): { stop(): PhaseCpu } {
  const take = () => ({
    server: cpuMs(pids.server),
    raw: pids.raw === undefined ? 0 : cpuMs(pids.raw),
    recorder: pids.recorder === undefined ? 0 : cpuMs(pids.recorder),
    bench: (() => {
      const u = process.cpuUsage();
      return (u.user + u.system) / 1000;
    })(),
    machine: machineCpuMs(),
  });
  const a = take();
  return {
    stop: () => {
      const b = take();
      const d = (k: "server" | "raw" | "recorder" | "bench") => b[k] - a[k];
      const cpu = {
        server: d("server"),
        bench: d("bench"),
        raw: d("raw"),
        recorder: d("recorder"),
        other: 0,
        idle: b.machine.idle - a.machine.idle,
        iowait: b.machine.iowait - a.machine.iowait,
      };
      cpu.other = Math.max(
        0,
        b.machine.busy - a.machine.busy - OURS.reduce((s, k) => s + cpu[k], 0),
      );
      return cpu;
    },
  };
}

export interface PhaseOptions {
  admin: KubeClient;
  /** Compacts etcd before the phase, so every phase starts on the same short history. */
  compact: () => Promise<unknown>;
  targets: Target[];
  writers: number;
  seed: number;
  seconds: number;
  onAck?: (a: Ack) => void;
}

/**
 * The server's CPU at rest (its watch cache, etcd's progress notifications, leases, its GC) is paid
 * per second, not per write: charged per write it made a phase at a lower rate look dearer per write.
 * Measured once, with nobody writing or watching.
 */
export async function measureRest(pids: Pids, seconds: number): Promise<Rest> {
  const meter = cpuMeter(pids);
  const t0 = Date.now();
  await sleep(seconds * 1000);
  const cpu = meter.stop();
  const ms = Date.now() - t0;
  return { server: cpu.server / ms, bench: cpu.bench / ms };
}

/** Runs the writers for `seconds` and measures the rate and everyone's CPU meanwhile. */
export async function runPhase(
  name: string,
  pids: Pids,
  rest: Rest,
  o: PhaseOptions,
): Promise<Phase> {
  await o.compact();
  const meter = cpuMeter(pids);
  const w = startWriters(o.admin, o.targets, o.writers, o.seed, o.onAck);
  await sleep(o.seconds * 1000);
  const r = await w.stop();
  return phaseOf(name, r, meter.stop(), rest);
}

/** A phase from its writers' result and its CPU. */
export function phaseOf(
  name: string,
  r: { writes: number; elapsedMs: number; failures: number },
  cpu: PhaseCpu,
  rest: Rest,
): Phase {
  const beyond = (k: keyof Rest) => Math.max(0, cpu[k] - rest[k] * r.elapsedMs);
  const work = {
    server: beyond("server"),
    bench: beyond("bench"),
    raw: cpu.raw,
    recorder: cpu.recorder,
  };
  return { name, ...r, rate: r.writes / (r.elapsedMs / 1000), cpu, work };
}

/** The CPU the phase's writes cost all our processes, ms. */
const ours = (p: Phase) => OURS.reduce((s, k) => s + p.work[k], 0);

/** The CPU table: per phase, each process's share of one core and the CPU its writes cost. */
export function cpuTable(phases: Phase[], rest: Rest): string[] {
  const head =
    "CPU, % of one core (µs per write)".padEnd(34) +
    ["server", "bench", "raw watch", "recorder", "all ours", "other", "idle"]
      .map(h => h.padStart(13))
      .join("");
  const out = [head];
  for (const p of phases) {
    const core = (ms: number) => `${((ms / p.elapsedMs) * 100).toFixed(0)}%`;
    const both = (ms: number, work: number) =>
      ms === 0 ? "-" : `${core(ms)} (${((work * 1000) / p.writes).toFixed(0)})`;
    const cells = [
      ...OURS.map(k => both(p.cpu[k], p.work[k])),
      both(
        OURS.reduce((n, k) => n + p.cpu[k], 0),
        ours(p),
      ),
      core(p.cpu.other),
      core(p.cpu.idle + p.cpu.iowait),
    ];
    out.push(
      `${p.name} ${p.rate.toFixed(0)}/s`.padEnd(34) + cells.map(c => c.padStart(13)).join(""),
    );
  }
  const pc = (x: number) => `${(x * 100).toFixed(0)}%`;
  out.push(
    `  at rest: server ${pc(rest.server)}, bench ${pc(rest.bench)} of a core; µs per write leave it out`,
  );
  return out;
}

/**
 * Splits 1 - rate/ceiling. rate = (CPU our processes got for writes) / (CPU per write), so
 * rate/ceiling = (got / got at the ceiling) * (per write at the ceiling / per write): each process's
 * extra CPU per write over the phase's per write is its share; the rest is the CPU they got changing
 * (other load on the host, idle time). The shares add up to the loss. CPU per write leaves out
 * what the server and this process use at rest (Rest).
 */
export function lossBreakdown(
  ceiling: Phase,
  p: Phase,
): { loss: number; parts: [string, number][] } {
  const per = (x: Phase, k: (typeof OURS)[number]) => x.work[k] / x.writes;
  const perAll = ours(p) / p.writes;
  const parts: [string, number][] = OURS.map(k => [k, (per(p, k) - per(ceiling, k)) / perAll]);
  const loss = 1 - p.rate / ceiling.rate;
  const extra = parts.reduce((s, [, v]) => s + v, 0);
  parts.push(["CPU available", loss - extra]);
  return { loss, parts };
}

/** lossBreakdown() as one line: "0.233 = server 0.080, raw 0.040, ...". */
export function lossLine(ceiling: Phase, p: Phase): string {
  const { loss, parts } = lossBreakdown(ceiling, p);
  return `${loss.toFixed(3)} = ${parts.map(([k, v]) => `${k} ${v.toFixed(3)}`).join(", ")}`;
}

/**
 * The rate rows. `write rate / ceiling` keeps its meaning (the lag window: recorder and raw client
 * watching, the journal polled, against nobody watching, the first ceiling). The recorder alone
 * against the ceiling is what recording costs the cluster; the lag window against the raw client
 * alone isolates what the recorder costs beside a watcher that only reads. Each base ran twice, first
 * and last: a ratio is MET only against both (the second is printed beside it).
 */
export function reportRates(
  row: Row,
  [ceiling, ceilingAfter]: [Phase, Phase],
  [rawOnly, rawAfter]: [Phase, Phase],
  recOnly: Phase,
  window: Phase,
) {
  const of = (p: Phase) => `${(p.rate / ceiling.rate).toFixed(3)} of ceiling`;
  row("write rate, raw watch client only", `${rawOnly.rate.toFixed(0)}/s`, of(rawOnly));
  row("write rate, recorder only", `${recOnly.rate.toFixed(0)}/s`, of(recOnly));
  // The same ratio had our processes got the same CPU in both phases (lossBreakdown): the CPU per
  // write of the base over the phase's. Load that moves between phases does not move it.
  const equal = (base: Phase, p: Phase) =>
    (ours(base) / base.writes / (ours(p) / p.writes)).toFixed(3);
  const ratio = (k: string, p: Phase, base: Phase, again: Phase) => {
    const r = p.rate / base.rate;
    const r2 = p.rate / again.rate;
    const ok = r >= 0.95 && r2 >= 0.95;
    row(
      k,
      r.toFixed(3),
      `${verdict(ok, ">= 0.95 against both")}; ${r2.toFixed(3)} against the last, ${equal(base, p)} at equal CPU`,
    );
  };
  ratio("write rate / ceiling", window, ceiling, ceilingAfter);
  ratio("write rate / ceiling, recorder only", recOnly, ceiling, ceilingAfter);
  ratio("recording / raw client only", window, rawOnly, rawAfter);
  for (const p of [rawOnly, recOnly, window])
    console.log(`  rate lost, ${p.name}: ${lossLine(ceiling, p)}`);
  const perWrite = (p: Phase) => (p.cpu.recorder * 1000) / p.writes;
  row(
    "recorder CPU while measuring",
    `${((window.cpu.recorder / window.elapsedMs) * 100).toFixed(0)}% of a core`,
    `${perWrite(window).toFixed(0)} µs per write (lag window)`,
  );
  // What the recorder needs to follow the ceiling's rate: below a core, it keeps up given one.
  const atCeiling = (perWrite(recOnly) * ceiling.rate) / 1e4;
  row(
    "recorder CPU at the ceiling's rate",
    `${atCeiling.toFixed(0)}% of a core`,
    `${perWrite(recOnly).toFixed(0)} µs per write (recorder only) x ${ceiling.rate.toFixed(0)}/s`,
  );
}
