// Scale benchmark against the real kube-apiserver harness: OBJECTS objects (ConfigMaps and custom
// resources) over NAMESPACES namespaces, listed and watched by a `krply record` process through
// cluster-wide streams, while writers patch them as fast as the server accepts. The server's own
// write ceiling is measured first, in the same run, with nobody watching; then the same writers run
// with only the raw watch client watching, with only the recorder, and with both (the lag window),
// and each phase's rate is compared with the ceiling; each process's CPU in each phase says where
// the rate went (lib-scale-phases.ts). Then the same workload runs for MINUTES minutes and the
// recorder's RSS is printed every minute with its slope; last, the ceiling is measured once more.
//
// Flags: --objects N (150000), --namespaces N (500), --cr-share F (0.2), --writers N (8),
//        --ceiling-s N (20: each of the ceiling, raw-only and recorder-only phases), --measure-s N (60),
//        --minutes N (30; 0 skips the soak), --startup-records N (1000000; 0 skips),
//        --data DIR (harness data dir; reused, so objects are created once per size),
//        --trace-gc (the recorder's GC pauses while measuring lag), --cpu-prof DIR (its CPU profile),
//        --dump FILE (every write of the lag window: ack, raw arrival and durable times)
import { type ChildProcess } from "node:child_process";
import { mkdirSync } from "node:fs";
import { openJournal } from "../src/journal";
import { KubeClient, loadKubeConfig } from "../src/kube/client";
import { startApiServer } from "../test/apiserver";
import { tempJournalPath } from "../test/support/journal-fixtures";
import { shippedCli } from "./lib-cli-bundle";
import { followGcTrace } from "./lib-gc-trace";
import { trackLag } from "./lib-lag-tracker";
import { mem, pct, sleep, slope, verdict } from "./lib-proc";
import { startRawWatch } from "./lib-raw-watch";
import { reportLagWindow, reportSoakLag } from "./lib-scale-lag-report";
import {
  cpuMeter,
  cpuTable,
  measureRest,
  phaseOf,
  reportRates,
  runPhase,
  type Pids,
  type Rest,
} from "./lib-scale-phases";
import { journalState, record, startupOnBigJournal } from "./lib-scale-recorder";
import { ensureWorkload, GROUP, startWriters, watchCachesReady } from "./lib-scale-workload";
import { numberFlag, stringFlag } from "./lib-flags";

/** Runs the benchmark. */
export async function main(args: string[]): Promise<void> {
  const objects = numberFlag(args, "objects", 150_000);
  const namespaces = numberFlag(args, "namespaces", 500);
  const crShare = numberFlag(args, "cr-share", 0.2);
  const writers = numberFlag(args, "writers", 8);
  const ceilingS = numberFlag(args, "ceiling-s", 20);
  const measureS = numberFlag(args, "measure-s", 60);
  const minutes = numberFlag(args, "minutes", 30, { zeroOk: true });
  const startupRecords = numberFlag(args, "startup-records", 1_000_000, { zeroOk: true });
  const cpuProf = stringFlag(args, "cpu-prof");
  const dataDir = stringFlag(args, "data") ?? `/tmp/krply-scale-${objects}-${namespaces}`;
  mkdirSync(dataDir, { recursive: true });
  const server = await startApiServer({ dataDir, readyTimeoutMs: 300_000 });
  const admin = await KubeClient.create(loadKubeConfig({ kubeconfig: server.kubeconfigs.admin }));
  const tmp = tempJournalPath("krply-bench-scale-");
  const row = (k: string, v: string, target = "") =>
    console.log(`${k.padEnd(40)} ${v.padStart(16)}   ${target}`);
  let child: ChildProcess | null = null;
  const cleanups: (() => unknown)[] = [];
  try {
    const targets = await ensureWorkload(admin, objects, namespaces, crShare, "scale");
    const cli = shippedCli({ names: cpuProf !== undefined });
    cleanups.push(cli.cleanup);
    const runner = cli.runner;
    // The harness leaves compaction to its users, and every write of a run is a new etcd revision
    // (about 1.7 KiB): a 30-minute run at 358 writes/s filled etcd's 2 GiB quota (NOSPACE, every
    // later write refused), and a longer history makes each write dearer for the server. So every
    // phase starts compacted, and the soak compacts every 5 minutes; the recorder's durable RV
    // passes the compacted revision within milliseconds, so its next reconnect still resumes.
    const compact = () => server.compact();
    let rest: Rest = { server: 0, bench: 0 };
    const phase = (name: string, pids: Pids, seed: number, seconds = ceilingS) =>
      runPhase(name, pids, rest, { admin, targets, writers, seed, seconds, compact });
    const collections = ["/api/v1/configmaps", `/apis/${GROUP}/v1/widgets`];
    const server0 = { server: server.info.pid };

    // 1. Start-up on a journal of startupRecords records (--startup-records 0 skips it).
    if (startupRecords >= 1000)
      await startupOnBigJournal(runner, server.kubeconfigs.admin, startupRecords, row);
    await watchCachesReady(admin, collections);
    await compact();
    rest = await measureRest(server0, 10);
    // 2. The harness's own ceiling: the same writers, nobody watching. Then the same with only the
    // raw watch client watching: what serving one plain watcher (and the client's CPU) costs.
    const ceiling = await phase("no watch (ceiling)", server0, 1);
    row("harness write ceiling (no recorder)", `${ceiling.rate.toFixed(0)}/s`, "(baseline)");
    const raw0 = await startRawWatch(server.kubeconfigs.admin, collections);
    cleanups.push(() => raw0.stop());
    const rawOnly = await phase("raw watch client only", { ...server0, raw: raw0.pid }, 2);
    await raw0.stop();

    // 3. Start-up: list and watch everything through two cluster-wide streams.
    const store = tmp.path;
    const t0 = Date.now();
    const nodeFlags = [
      ...(args.includes("--trace-gc") ? ["--trace-gc"] : []),
      ...(cpuProf ? ["--cpu-prof", "--cpu-prof-dir", cpuProf] : []),
    ];
    const spawnedAt = Date.now();
    child = record(
      runner,
      server.kubeconfigs.admin,
      store,
      ["-r", `configmaps,widgets.${GROUP}`],
      nodeFlags,
    );
    const gc = nodeFlags.includes("--trace-gc") ? followGcTrace(child.stdout!, spawnedAt) : null;
    child.stdout?.resume();
    const pid = child.pid!;
    const samples: { t: number; rss: number }[] = [];
    const sampler = setInterval(() => {
      try {
        samples.push({ t: Date.now(), rss: mem(pid).rss });
      } catch {
        // the child exited; the caller reports it
      }
    }, 1000);
    let state = journalState(store);
    while (state.streams < 2 || state.live < state.streams) {
      if (child.exitCode !== null) throw new Error("krply record exited during start-up");
      if (Date.now() - t0 > 1_800_000) throw new Error("streams not live after 30 minutes");
      await sleep(500);
      state = journalState(store);
    }
    const liveMs = Date.now() - t0;
    row("start to every stream live", `${(liveMs / 1000).toFixed(1)} s`, `${objects} objects`);
    const afterList = mem(pid);
    row("recorder RSS after listing", `${afterList.rss.toFixed(0)} MiB`);

    // 4. The recorder alone watching (nobody polls its journal either): what recording costs.
    const recOnly = await phase("recorder only", { ...server0, recorder: pid }, 3);

    // 5. Writes while recording with the raw client beside it: rate and lag (ack to durable
    // checkpoint). The raw client, in its own process, stamps when each written RV arrives: the
    // lag splits into the server's delivery and what the recorder adds after it.
    await compact();
    const raw = await startRawWatch(server.kubeconfigs.admin, collections);
    cleanups.push(() => raw.stop());
    const both = { ...server0, raw: raw.pid, recorder: pid };
    const measureFrom = Date.now();
    const meter = cpuMeter(both);
    const lag = trackLag(() => journalState(store), raw.arrivals);
    const loaded = startWriters(admin, targets, writers, 1000, a => lag.track(a));
    await sleep(measureS * 1000);
    const window = phaseOf("recorder + raw (lag window)", await loaded.stop(), meter.stop(), rest);
    const measureTo = Date.now();
    const lagResult = await lag.finish();
    row("write rate while recording", `${window.rate.toFixed(0)}/s`, "recorder + raw client");
    reportLagWindow(row, lagResult, raw.arrivals, {
      from: measureFrom,
      to: measureTo,
      gc,
      dump: stringFlag(args, "dump"),
    });

    // 6. The soak: the same workload for `minutes`, RSS every minute, and the lag of every write: a
    // stall of the recorder that a one-minute window misses shows here.
    const phases = [ceiling, rawOnly, recOnly, window];
    let soakWrites = 0;
    if (minutes > 0) {
      const soakLag = trackLag(() => journalState(store), raw.arrivals);
      const soakMeter = cpuMeter(both);
      const soak = startWriters(admin, targets, writers, 5000, a => soakLag.track(a));
      const perMinute: number[] = [];
      for (let i = 1; i <= minutes; i++) {
        await sleep(60_000);
        if (child.exitCode !== null) throw new Error("krply record exited during the soak");
        const r = mem(pid).rss;
        perMinute.push(r);
        console.log(`  minute ${String(i).padStart(2)}: RSS ${r.toFixed(1)} MiB`);
        if (i % 5 === 0) await server.compact();
      }
      const s = phaseOf("soak (recorder + raw)", await soak.stop(), soakMeter.stop(), rest);
      phases.push(s);
      soakWrites = s.writes;
      const sl = await soakLag.finish();
      row(
        "soak write rate",
        `${s.rate.toFixed(0)}/s`,
        `${(s.rate / ceiling.rate).toFixed(3)} of ceiling`,
      );
      reportSoakLag(row, sl, raw.arrivals);
      const rssSlope = slope(
        perMinute.map((_, i) => i + 1),
        perMinute,
      );
      // A slope needs a soak long enough to show one; the issue asks for 30 minutes.
      row(
        "RSS slope over the soak",
        `${rssSlope.toFixed(2)} MiB/min`,
        minutes >= 30
          ? verdict(Math.abs(rssSlope) < 0.5, "flat, |slope| < 0.5 over 30+ minutes")
          : `${minutes} minutes: too short for a slope`,
      );
    }
    await raw.stop();
    clearInterval(sampler);
    const all = samples.filter(x => x.t >= t0 + liveMs).map(x => x.rss);
    all.sort((a, b) => a - b);
    const hwm = mem(pid).hwm;
    const steady = pct(all, 50);
    row(
      "recorder RSS steady (median, live)",
      `${steady.toFixed(0)} MiB`,
      verdict(steady < 512, "< 512 MiB"),
    );
    row("recorder RSS peak (VmHWM)", `${hwm.toFixed(0)} MiB`, verdict(hwm < 512, "< 512 MiB"));
    child.kill("SIGINT");
    await new Promise(r => child!.once("exit", r));
    child = null;

    // 7. The first two phases once more, in the mirror order: how far the machine's load moved during
    // the run. A ratio is met only against both of its bases, so a load that eases after the first
    // ceiling cannot pass it.
    const raw2 = await startRawWatch(server.kubeconfigs.admin, collections);
    cleanups.push(() => raw2.stop());
    const rawAfter = await phase("raw watch client only, after", { ...server0, raw: raw2.pid }, 5);
    await raw2.stop();
    const after = await phase("no watch, after", server0, 4);
    phases.push(rawAfter, after);
    row(
      "harness write ceiling, after",
      `${after.rate.toFixed(0)}/s`,
      `${(after.rate / ceiling.rate).toFixed(3)} of the first: the load moved by that much`,
    );
    reportRates(row, [ceiling, after], [rawOnly, rawAfter], recOnly, window);
    for (const line of cpuTable(phases, rest)) console.log(line);
    const j = openJournal(store);
    const st = j.stats();
    const bytes = j.sizeBytes();
    j.close();
    row("journal records", String(st.records));
    row(
      "journal bytes / record",
      (bytes / st.records).toFixed(0),
      `${(bytes / 2 ** 20).toFixed(0)} MiB`,
    );
    row(
      "journal bytes / live event",
      (bytes / (window.writes + soakWrites)).toFixed(0),
      "includes the baseline",
    );
    row(
      "dedup filter (fixed)",
      `${(st.dedup.bytes / 2 ** 20).toFixed(2)} MiB`,
      `${st.dedup.ids} ids in the window`,
    );
  } finally {
    child?.kill("SIGKILL");
    for (const c of cleanups) await c();
    await admin.close();
    tmp.cleanup();
    await server.dispose();
  }
}
