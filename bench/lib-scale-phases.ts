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

/** Runs the writers for `seconds` and measures the rate and everyone's CPU meanwhile. */
export async function runPhase(name: string, pids: Pids, o: PhaseOptions): Promise<Phase> {
  await o.compact();
  const meter = cpuMeter(pids);
  const w = startWriters(o.admin, o.targets, o.writers, o.seed, o.onAck);
  await sleep(o.seconds * 1000);
  const r = await w.stop();
  return phaseOf(name, r, meter.stop());
}

/** A phase from its writers' result and its CPU. */
export function phaseOf(
  name: string,
  r: { writes: number; elapsedMs: number; failures: number },
  cpu: PhaseCpu,
): Phase {
  return { name, ...r, rate: r.writes / (r.elapsedMs / 1000), cpu };
}

const ours = (p: Phase) => OURS.reduce((s, k) => s + p.cpu[k], 0);

/** The CPU table: per phase, each process's share of one core and its CPU per write. */
export function cpuTable(phases: Phase[]): string[] {
  const head =
    "CPU by process, % of one core (µs per write)".padEnd(34) +
    ["server", "bench", "raw watch", "recorder", "all ours", "other", "idle"]
      .map(h => h.padStart(13))
      .join("");
  const out = [head];
  for (const p of phases) {
    const core = (ms: number) => `${((ms / p.elapsedMs) * 100).toFixed(0)}%`;
    const both = (ms: number) =>
      ms === 0 ? "-" : `${core(ms)} (${((ms * 1000) / p.writes).toFixed(0)})`;
    const cells = [
      ...OURS.map(k => both(p.cpu[k])),
      both(ours(p)),
      core(p.cpu.other),
      core(p.cpu.idle + p.cpu.iowait),
    ];
    out.push(
      `${p.name} ${p.rate.toFixed(0)}/s`.padEnd(34) + cells.map(c => c.padStart(13)).join(""),
    );
  }
  return out;
}

/**
 * Splits 1 - rate/ceiling. rate = (CPU our processes got) / (CPU per write), so
 * rate/ceiling = (got / got at the ceiling) * (per write at the ceiling / per write): each process's
 * extra CPU per write over the phase's per write is its share; the rest is the CPU they got changing
 * (other load on the host, idle time). The shares add up to the loss.
 */
export function lossBreakdown(
  ceiling: Phase,
  p: Phase,
): { loss: number; parts: [string, number][] } {
  const per = (x: Phase, k: (typeof OURS)[number]) => x.cpu[k] / x.writes;
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
 * watching, the journal polled, against nobody watching). The recorder alone against the ceiling is
 * what recording costs the cluster; the lag window against the raw client alone isolates what the
 * recorder costs beside a watcher that only reads.
 */
export function reportRates(
  row: Row,
  ceiling: Phase,
  rawOnly: Phase,
  recOnly: Phase,
  window: Phase,
) {
  const of = (p: Phase) => `${(p.rate / ceiling.rate).toFixed(3)} of ceiling`;
  row("write rate, raw watch client only", `${rawOnly.rate.toFixed(0)}/s`, of(rawOnly));
  row("write rate, recorder only", `${recOnly.rate.toFixed(0)}/s`, of(recOnly));
  row(
    "write rate while recording",
    `${window.rate.toFixed(0)}/s`,
    "recorder + raw client, lag window",
  );
  // The same ratio had our processes got the same CPU in both phases (lossBreakdown): the CPU per
  // write of the base over the phase's. Load that moves between phases does not move it.
  const equal = (base: Phase, p: Phase) =>
    `${(ours(base) / base.writes / (ours(p) / p.writes)).toFixed(3)} at equal CPU`;
  const ratio = (k: string, p: Phase, base: Phase) => {
    const r = p.rate / base.rate;
    row(k, r.toFixed(3), `${verdict(r >= 0.95, ">= 0.95")}   (${equal(base, p)})`);
  };
  ratio("write rate / ceiling", window, ceiling);
  ratio("write rate / ceiling, recorder only", recOnly, ceiling);
  ratio("recording / raw client only", window, rawOnly);
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
