// Recorder benchmark against a real kube-apiserver: 4 writers update 200 ConfigMaps as fast as the server
// accepts (20k writes). The server's own acknowledged write rate is the baseline the recorder's ingest rate
// is measured against in the same run. Also: end-to-end lag (ack -> commit), missed events, and the RSS of
// a `krply record` process watching 10k objects.
import { spawn } from "node:child_process";
import { build } from "esbuild";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { streamIdOf } from "../src/event";
import { openJournal, openJournalView } from "../src/journal";
import { tempJournalPath } from "../test/support/journal-fixtures";
import { KubeClient, loadKubeConfig } from "../src/kube/client";
import { clusterIdentity } from "../src/watch/cluster-identity";
import { Supervisor } from "../src/watch/supervisor";
import { startApiServer, type ApiServer } from "../test/apiserver";
import { readApiServerInfo, type ApiServerInfo } from "../test/apiserver/types";
import {
  createConfigMaps,
  deliveriesOf,
  ensureNamespace,
  runWriters,
  verify,
  type Ack,
} from "../test/integration/recorder-workload";
import { allRecords } from "../test/integration/recorder-support";

function flag(args: string[], name: string, def: number): number {
  const i = args.indexOf(`--${name}`);
  if (i < 0) return def;
  const v = Number(args[i + 1]);
  if (!Number.isFinite(v) || v <= 0) throw new Error(`--${name} needs a positive number`);
  return v;
}

const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

function rssMiB(pid: number): { rss: number; hwm: number } {
  const s = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(s)?.[1] ?? 0);
  return { rss: kb("VmRSS") / 1024, hwm: kb("VmHWM") / 1024 };
}

async function server(): Promise<{ info: ApiServerInfo; own?: ApiServer }> {
  const ext = process.env.KRPLY_APISERVER_INFO;
  if (ext && existsSync(ext)) return { info: readApiServerInfo(ext) };
  const own = await startApiServer();
  return { info: own.info, own };
}

/** Runs the benchmark; flags: --writes N, --objects N (written), --watched N (RSS phase), --writers N. */
export async function main(args: string[]): Promise<void> {
  const writes = flag(args, "writes", 20_000);
  const objects = flag(args, "objects", 200);
  const watched = flag(args, "watched", 10_000);
  const writers = flag(args, "writers", 4);
  const { info, own } = await server();
  const admin = await KubeClient.create(loadKubeConfig({ kubeconfig: info.kubeconfigs.admin }));
  const run = Date.now().toString(36);
  const hot = `bench-rec-${run}`;
  // Reused across runs: creating 10k objects takes minutes at the harness's write rate.
  const cold = `bench-rss-${watched}`;
  const tmp = tempJournalPath("krply-bench-recorder-");
  try {
    await ensureNamespace(admin, hot);
    await ensureNamespace(admin, cold);
    const targets = (await createConfigMaps(admin, hot, objects, "cm", 16)).map(a => ({
      ns: hot,
      name: a.name,
    }));
    const clusterId = (await clusterIdentity(admin)).clusterId;
    const key = {
      clusterId,
      group: "",
      version: "v1",
      resource: "configmaps",
      namespace: hot,
      selector: "",
    };
    const id = streamIdOf(key);

    // Phase 1: ingest rate and lag, recorder in this process with the recorder user's rights.
    const journal = openJournal(tmp.path);
    const client = await KubeClient.create(
      loadKubeConfig({ kubeconfig: info.kubeconfigs.recorder }),
    );
    const committedAt = new Map<string, number>();
    let firstCommit = 0;
    let lastCommit = 0;
    let live = 0;
    const sup = new Supervisor({
      client,
      journal,
      onCommit: (items, at) => {
        for (const it of items)
          for (const r of it.records) {
            if (r.type !== "event") continue;
            committedAt.set(`${r.resource!.name}@${r.resource!.resourceVersion}`, at);
            live++;
            firstCommit ||= at;
            lastCommit = at;
          }
      },
    });
    sup.add({ key, kind: "ConfigMap", path: `/api/v1/namespaces/${hot}/configmaps` });
    while (!journal.streams().find(s => s.streamId === id)?.baselinePresent) {
      await new Promise(r => setTimeout(r, 20));
    }
    const t0 = Date.now();
    const w = await runWriters({ client: admin, targets, writers, total: writes });
    const lastRv = w.acks.reduce((m, a) => Math.max(m, Number(a.rv)), 0);
    const deadline = Date.now() + 60_000;
    while (
      Number(journal.streams().find(s => s.streamId === id)?.lastResourceVersion ?? 0) < lastRv
    ) {
      if (Date.now() > deadline) break;
      await new Promise(r => setTimeout(r, 10));
    }
    const serverRate = writes / (w.elapsedMs / 1000);
    const ingestRate = live / ((lastCommit - t0) / 1000);
    const lags = w.acks
      .map((a: Ack) => (committedAt.get(`${a.name}@${a.rv}`) ?? Number.NaN) - a.at)
      .filter(Number.isFinite)
      .map(l => Math.max(0, l))
      .sort((a, b) => a - b);
    const v = verify(w.acks, deliveriesOf(allRecords(journal, id)));
    if (v.lost > 0) {
      console.log(
        "missed (sample):",
        JSON.stringify(v.unmarkedSample),
        JSON.stringify(sup.status()),
      );
    }
    await sup.stop();
    await client.close();
    journal.close();

    // Phase 2: RSS of `krply record` (the shipped engine in its own process) watching `watched` objects.
    const want = Math.max(0, watched - objects);
    const have = await admin.json<{ items: unknown[] }>(`/api/v1/namespaces/${cold}/configmaps`);
    if (have.items.length < want) {
      await admin
        .json(`/api/v1/namespaces/${cold}/configmaps`, { method: "DELETE" })
        .catch((err: unknown) => console.warn("cannot clear", cold, err));
      await createConfigMaps(admin, cold, want, `cold-${run}`, 16);
    }
    // The shipped CLI is a bundle; running it through tsx would add the TypeScript toolchain to the RSS.
    const bundle = join(tmp.dir, "krply.js");
    await build({
      entryPoints: [join(__dirname, "..", "src", "cli", "main.ts")],
      bundle: true,
      platform: "node",
      target: "node20",
      outfile: bundle,
      external: ["better-sqlite3"],
      logLevel: "error",
    });
    // Run the bundle itself: bin/krply.js would fall back to tsx when dist/ has no CLI build.
    const runner = join(tmp.dir, "run-krply.js");
    writeFileSync(runner, `require(${JSON.stringify(bundle)}).runCli(process.argv);\n`);
    const rssStore = tempJournalPath("krply-bench-rss-");
    const child = spawn(
      process.execPath,
      [
        runner,
        "record",
        "--kubeconfig",
        info.kubeconfigs.recorder,
        "-r",
        "configmaps",
        "-n",
        hot,
        "-n",
        cold,
        "--store",
        rssStore.path,
      ],
      {
        stdio: ["ignore", "ignore", "pipe"],
        env: {
          ...process.env,
          KRPLY_LOG_LEVEL: "warn",
          NODE_PATH: join(__dirname, "..", "node_modules"),
        },
      },
    );
    let stderr = "";
    child.stderr.on("data", d => (stderr += String(d)));
    const rj = () => openJournalView(rssStore.path);
    const until = Date.now() + 120_000;
    let baselined = false;
    while (!baselined && Date.now() < until) {
      await new Promise(r => setTimeout(r, 500));
      if (!existsSync(rssStore.path)) continue;
      const j = rj();
      try {
        baselined = j.streams().length === 2 && j.streams().every(s => s.baselinePresent);
      } finally {
        j.close();
      }
    }
    if (!baselined) throw new Error(`krply record did not baseline 2 streams: ${stderr}`);
    await runWriters({ client: admin, targets, writers, total: 2000 });
    await new Promise(r => setTimeout(r, 2000));
    const mem = rssMiB(child.pid!);
    child.kill("SIGINT");
    await new Promise(r => child.once("exit", r));
    rssStore.cleanup();

    const row = (k: string, val: string, target: string) =>
      console.log(`${k.padEnd(34)} ${val.padStart(14)}   ${target}`);
    row("writes acknowledged", String(w.acks.length), "");
    row("server write rate", `${serverRate.toFixed(0)}/s`, "(baseline)");
    row("recorder ingest rate", `${ingestRate.toFixed(0)}/s`, "");
    row("ingest / write ratio", (ingestRate / serverRate).toFixed(3), "target >= 0.99");
    row("end-to-end lag p50", `${pct(lags, 50).toFixed(1)} ms`, "");
    row("end-to-end lag p99", `${pct(lags, 99).toFixed(1)} ms`, "target < 500 ms");
    row("end-to-end lag max", `${lags[lags.length - 1].toFixed(1)} ms`, "");
    row(`recorder RSS, ${watched} objects`, `${mem.rss.toFixed(1)} MiB`, "target < 200 MiB");
    row("recorder peak RSS (VmHWM)", `${mem.hwm.toFixed(1)} MiB`, "");
    row("missed events", String(v.lost), "target 0");
    row("duplicates / out of order", `${v.duplicates} / ${v.outOfOrder}`, "target 0 / 0");
  } finally {
    await admin.close();
    tmp.cleanup();
    await own?.dispose();
  }
}
