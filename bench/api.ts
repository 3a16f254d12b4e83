// Query sidecar benchmark: 50 connections on object history and on events pages over a 1M-event
// journal, alone and with one snapshot taken every second; req/s, p50, p99 and the sidecar's RSS.
// Targets (issue 14): p99 < 50 ms for history and events, alone and with snapshots; RSS < 256 MiB.
// Baseline measured in this run: the same questions asked in-process (no HTTP, no pool).
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { copyFileSync, existsSync, readFileSync, rmSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { SIDECAR_NODE_FLAGS } from "../deploy/finalize/objects";
import { encodeCursor } from "../src/api";
import { openJournal, openJournalView } from "../src/journal";
import { timeline } from "../src/materialize";
import { BENCH_CLUSTER, buildJournal, T0 } from "./lib-materialize-data";
import { wholeFlag, stringFlag } from "./lib-flags";
import { rng } from "./lib-kube-workload";

interface Histogram {
  p50: number;
  p99: number;
  average: number;
}
interface CannonResult {
  requests: { average: number; total: number };
  /** Bytes read, headers included. */
  throughput: { total: number };
  latency: Histogram;
  non2xx: number;
  errors: number;
  timeouts: number;
}
type Cannon = (opts: Record<string, unknown>) => Promise<CannonResult>;
// autocannon ships no types; only the fields read here are declared.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const autocannon = require("autocannon") as Cannon;

const OBJECTS = 10_000;
/** Pages after each of the 100 event cursors that the every-page-new runs ask: 8000 in all. */
const FRESH_PER_CURSOR = 80;
const PER_NS = 1000;

/** The bench journal: the materialize bench's when it exists (copied, so writes stay here), else built. */
function journalPath(events: number, fresh: boolean): string {
  const path = join(tmpdir(), `krply-bench-api-${events}.db`);
  if (fresh) for (const p of [path, `${path}-wal`, `${path}-shm`]) rmSync(p, { force: true });
  if (existsSync(path)) return path;
  const shared = join(tmpdir(), `krply-bench-materialize-${events}-${OBJECTS}.db`);
  if (existsSync(shared)) {
    console.log(`copying ${shared} ...`);
    copyFileSync(shared, path);
  } else {
    console.log(`building ${events} events over ${OBJECTS} objects at ${path} ...`);
    buildJournal(path, events, OBJECTS, PER_NS).journal.close();
  }
  // Writable once, so a journal made by an older krply is migrated before it is measured.
  openJournal(path).close();
  return path;
}

/** Resident memory of a process: all of it, and the part that is its own heap (not mapped files). */
function rssMiB(pid: number): { total: number; anon: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0);
  return { total: kb("VmRSS") / 1024, anon: kb("RssAnon") / 1024 };
}

/** CPU time (user + system, ms) a process has used, all its threads together. */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // utime and stime are fields 14 and 15 of stat(5), in clock ticks (100 per second).
  return (Number(f[11]) + Number(f[12])) * 10;
}

async function startSidecar(
  path: string,
  profileDir: string | undefined,
): Promise<{ url: string; child: ChildProcess }> {
  // The bundle the container runs, built now so it is this checkout's code.
  const root = join(__dirname, "..");
  execFileSync("npm", ["run", "build:api"], { cwd: root, stdio: "ignore" });
  // --profile DIR: a CPU profile of every thread of the sidecar, written when it stops.
  const prof = profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : [];
  // With the flags the deployment gives it (deploy/finalize/objects.ts).
  const flags = [...SIDECAR_NODE_FLAGS, ...prof];
  const child = spawn(process.execPath, [...flags, join(root, "dist", "api", "main.js")], {
    env: {
      ...process.env,
      KRPLY_JOURNAL: path,
      KRPLY_API_AUTH: "none",
      KRPLY_API_HOST: "127.0.0.1",
      KRPLY_API_PORT: "0",
      KRPLY_API_QUERY_TIMEOUT_MS: "60000",
      KRPLY_API_MAX_QUEUE: "1000",
      KRPLY_LOG_LEVEL: "info",
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /"address":"([^"]+)"/.exec(out);
      if (m) resolve(`http://${m[1]}`);
    });
    child.on("exit", code => reject(new Error(`sidecar exited (${code}): ${out}`)));
  });
  return { url, child };
}

/** A random element of xs, drawn from the seeded `rand`, so two runs ask the same paths. */
const pick = <T>(rand: () => number, xs: T[]): T => xs[Math.floor(rand() * xs.length)];

/**
 * A cache's counters so far, by result: the history answer cache (krply_api_answer_cache_total) or
 * the events page cache (krply_api_events_cache_total).
 */
async function cacheCounts(
  url: string,
  metric: string,
): Promise<{ hit: number; stale: number; miss: number }> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const n = (r: string) =>
    Number(new RegExp(`${metric}\\{result="${r}"\\} (\\d+)`).exec(text)?.[1] ?? 0);
  return { hit: n("hit"), stale: n("stale"), miss: n("miss") };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/** Paths the in-order runs have asked so far (they continue where the last one stopped). */
let inOrderAsked = 0;

/** Runs a load; meanwhile samples RSS and, with snapshots on, POSTs one snapshot a second. */
async function load(
  label: string,
  url: string,
  pid: number,
  paths: string[],
  seconds: number,
  snapshots: boolean,
  inOrder = false,
) {
  const peak = rssMiB(pid);
  const cpu0 = cpuMs(pid);
  const sampler = setInterval(() => {
    const now = rssMiB(pid);
    peak.total = Math.max(peak.total, now.total);
    peak.anon = Math.max(peak.anon, now.anon);
  }, 200);
  const snaps: { ms: number; status: number }[] = [];
  let stop = false;
  const poster = (async () => {
    while (snapshots && !stop) {
      const t = Date.now();
      const res = await fetch(`${url}/v1/snapshots`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: "bench" }),
      });
      await res.arrayBuffer();
      snaps.push({ ms: Date.now() - t, status: res.status });
      await new Promise(r => setTimeout(r, Math.max(0, 1000 - (Date.now() - t))));
    }
  })();
  // In order, each path is asked once over all runs (until the list runs out), so no answer can be
  // served again.
  const from = inOrderAsked;
  // Seeded per run, so each run draws the same sequence whichever runs came before it (--only).
  const rand = rng(1234);
  const next = () => (inOrder ? paths[inOrderAsked++ % paths.length] : pick(rand, paths));
  const r = await autocannon({
    url,
    connections: 50,
    duration: seconds,
    requests: [{ method: "GET", setupRequest: (req: object) => ({ ...req, path: next() }) }],
  });
  stop = true;
  await poster;
  clearInterval(sampler);
  const cpu = cpuMs(pid) - cpu0;
  const row = {
    run: label,
    reqPerSec: Math.round(r.requests.average),
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
    peakRssMiB: Math.round(peak.total),
    peakAnonRssMiB: Math.round(peak.anon),
    // The sidecar's CPU per answered request (snapshots included): what the load costs, whatever
    // else the machine runs. With 50 requests always open, latency is at least 50 x this / cores.
    cpuMsPerReq: r.requests.total > 0 ? Math.round((cpu / r.requests.total) * 10) / 10 : null,
    // What each answer costs the sockets and autocannon, which share the cores with the sidecar.
    kbPerAnswer:
      r.requests.total > 0 ? Math.round(r.throughput.total / r.requests.total / 1024) : null,
    snapshots: snapshots ? snaps.length : undefined,
    snapshotMedianMs: snapshots && snaps.length ? median(snaps.map(s => s.ms)) : undefined,
    snapshotStatuses: snapshots ? [...new Set(snaps.map(s => s.status))].join(",") : undefined,
    askedAgain: inOrder ? Math.max(0, inOrderAsked - Math.max(from, paths.length)) : undefined,
  };
  console.log(JSON.stringify(row));
  return row;
}

/**
 * Runs the benchmark; `--events N` (default 1M), `--seconds N` per run (10), `--fresh` rebuilds,
 * `--only history|events` runs that load alone and with snapshots, `--profile DIR` profiles the sidecar.
 */
export async function main(args: string[]): Promise<void> {
  const events = wholeFlag(args, "events", 1_000_000);
  const seconds = wholeFlag(args, "seconds", 10);
  const path = journalPath(events, args.includes("--fresh"));
  const objects = Math.min(OBJECTS, events);
  const names = Array.from({ length: 200 }, (_, k) => Math.floor((k * 7919) % objects));
  const historyOf = (i: number) =>
    `/v1/objects/deployment/app-${i}/history?namespace=ns-${Math.floor(i / PER_NS)}`;
  const history = names.map(historyOf);
  // Every object: far more distinct pages than the sidecar's answer cache holds (40 MiB for history
  // and events pages together, about 360 pages of 100 versions), so this run shows the history route
  // without the cache's help.
  const historyAll = Array.from({ length: objects }, (_, i) => historyOf(i));

  // Events pages start at random places of the journal: cursors made here, as the server makes them.
  const view = openJournalView(path);
  const journalCursors: string[] = [];
  for (let k = 0; k < 100; k++) {
    const since = new Date(T0 + Math.floor(((k + 0.5) / 100) * events)).toISOString();
    const c = view.events({ since, limit: 1, includeObjects: false }).nextCursor;
    if (c) journalCursors.push(c);
  }
  const cursors = journalCursors.map(c => encodeCursor(c, {}));
  const eventPaths = cursors.map(c => `/v1/events?limit=100&cursor=${c}`);
  // Pages no run asks twice, for the runs a cache of pages cannot help: from each cursor above,
  // the cursors of the next FRESH_PER_CURSOR pages, asked in an order that spreads them out.
  const fresh: string[][] = journalCursors.map(c => {
    const out: string[] = [];
    let at: string | null = c;
    for (let k = 0; k < FRESH_PER_CURSOR && at; k++) {
      at = view.events({ cursor: at, limit: 100, includeObjects: false }).nextCursor;
      if (at) out.push(`/v1/events?limit=100&cursor=${encodeCursor(at, {})}`);
    }
    return out;
  });
  const freshPaths = fresh[0].flatMap((_, k) => fresh.map(list => list[k]).filter(Boolean));

  // The in-process baseline: the same questions without HTTP or the pool.
  const direct = (fn: () => unknown) => {
    const ms: number[] = [];
    for (let k = 0; k < 20; k++) {
      const t = process.hrtime.bigint();
      fn();
      ms.push(Number(process.hrtime.bigint() - t) / 1e6);
    }
    return median(ms);
  };
  let n = 0;
  const baseHistory = direct(() => {
    const i = names[n++ % names.length];
    return timeline(view, BENCH_CLUSTER, {
      kind: "Deployment",
      namespace: `ns-${Math.floor(i / PER_NS)}`,
      name: `app-${i}`,
    });
  });
  const sinceRand = rng(4321);
  const baseEvents = direct(() => {
    const since = new Date(T0 + Math.floor(sinceRand() * events)).toISOString();
    return view.events({ since, limit: 100 });
  });
  view.close();
  console.log(
    `baseline in-process: timeline ${baseHistory.toFixed(1)} ms, events page of 100 ${baseEvents.toFixed(1)} ms (medians)`,
  );

  const { url, child } = await startSidecar(path, stringFlag(args, "profile"));
  try {
    console.log(`sidecar ${url} (pid ${child.pid}), ${seconds} s per run, 50 connections`);
    // Each of the 200 history pages is asked once before each "history" run, as a sidecar that has
    // been up a while has them: those runs measure pages asked again. The "all objects" runs ask
    // pages the answer cache cannot hold (and push the 200 out of it), so they show every page
    // built afresh.
    // Likewise each of the 100 events pages is asked once before each "events" run; the "every
    // page new" runs ask pages no cache holds.
    const askOnce = async (paths: readonly string[]) => {
      for (const p of paths) await (await fetch(`${url}${p}`)).arrayBuffer();
    };
    await load(
      "warm-up",
      url,
      child.pid!,
      [...history.slice(0, 20), ...eventPaths.slice(0, 20)],
      2,
      false,
    );
    const only = stringFlag(args, "only");
    const rows = [];
    for (const snapshots of [false, true]) {
      for (const [name, paths, inOrder] of [
        ["history", history, false],
        [`history, all ${objects} objects`, historyAll, false],
        ["events", eventPaths, false],
        ["events, every page new", freshPaths, true],
      ] as const) {
        if (only && !name.startsWith(only)) continue;
        const label = snapshots ? `${name} + 1 snapshot/s` : name;
        if (paths === history || paths === eventPaths) await askOnce(paths);
        const metric = name.startsWith("history")
          ? "krply_api_answer_cache_total"
          : "krply_api_events_cache_total";
        const c0 = await cacheCounts(url, metric);
        const row = await load(label, url, child.pid!, paths, seconds, snapshots, inOrder);
        const c1 = await cacheCounts(url, metric);
        const hits = c1.hit - c0.hit;
        const asked = hits + c1.stale - c0.stale + c1.miss - c0.miss;
        rows.push({
          ...row,
          cacheHitRate: asked > 0 ? Math.round((hits / asked) * 100) / 100 : null,
        });
      }
    }
    const cores = availableParallelism();
    for (const r of rows) {
      const base = r.run.startsWith("history") ? baseHistory : baseEvents;
      const floor = r.cpuMsPerReq === null ? "?" : ((50 * r.cpuMsPerReq) / cores).toFixed(0);
      const met = r.p99Ms < 50 && r.peakRssMiB < 256 ? "MET" : "not met";
      const which = r.run.startsWith("history") ? "answer" : "events page";
      const cache = r.cacheHitRate === null ? "" : `${which} cache hit rate ${r.cacheHitRate}, `;
      console.log(
        `${r.run}: ${met}: ${r.reqPerSec} req/s, p50 ${r.p50Ms} ms, p99 ${r.p99Ms} ms (target < 50), ${cache}` +
          `peak RSS ${r.peakRssMiB} MiB (target < 256; ${r.peakAnonRssMiB} MiB anonymous, the rest mapped files), ` +
          `p50 is ${(r.p50Ms / base).toFixed(1)}x the in-process median; ${r.kbPerAnswer} KiB per answer; ` +
          `${r.cpuMsPerReq} ms CPU per request, ` +
          `so p50 >= ${floor} ms with 50 open requests on ${cores} cores (${loadavg()[0].toFixed(1)} load)` +
          (r.askedAgain === undefined ? "" : `; pages asked again: ${r.askedAgain}`),
      );
    }
  } finally {
    child.kill("SIGTERM");
    await new Promise(r => child.once("exit", r));
  }
}
