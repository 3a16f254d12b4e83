// Recorder benchmark against a real kube-apiserver. Phase 1: 4 writers update 200 ConfigMaps as fast as
// the server accepts; the server's own acknowledged write rate is the baseline the recorder's ingest
// rate is measured against in the same run, with end-to-end lag (ack -> commit) and missed events.
// Phase 2: the RSS of `krply record` (the shipped CLI) on realistic objects: 10k ConfigMaps of 4 KiB
// with 500 Pods (managedFields of three managers, status), and 200 ConfigMaps + 20 Deployments
// (managedFields, status) under writes at the server's rate.
// Phase 3: saturation, the watch captured in phase 2 replayed by a fake server as fast as the socket
// takes it, against parsing the same lines and inserting them as rows (lib-saturation.ts).
import { existsSync } from "node:fs";
import { streamIdOf } from "../src/event";
import { openJournal } from "../src/journal";
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
import { shippedCli } from "./lib-cli-bundle";
import { seedNamespace } from "./lib-realistic-objects";
import { recordRss, SMALL_WATCHES, writeSmall } from "./lib-recorder-rss";
import { captureWatch, expand, rawRate, recorderRate } from "./lib-saturation";
import { numberFlag } from "./lib-flags";
import { median, verdict } from "./lib-proc";

const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

async function server(): Promise<{ info: ApiServerInfo; own?: ApiServer }> {
  const ext = process.env.KRPLY_APISERVER_INFO;
  if (ext && existsSync(ext)) return { info: readApiServerInfo(ext) };
  const own = await startApiServer();
  return { info: own.info, own };
}

/**
 * Runs the benchmark; flags: --writes N, --objects N (written), --watched N and --pods N (RSS phase),
 * --writers N.
 */
export async function main(args: string[]): Promise<void> {
  const writes = numberFlag(args, "writes", 20_000);
  const objects = numberFlag(args, "objects", 200);
  const watched = numberFlag(args, "watched", 10_000);
  // --pods 0 runs the 10k row as it was before the Pods (ConfigMaps and Deployments only).
  const pods = numberFlag(args, "pods", 500, { zeroOk: true });
  const writers = numberFlag(args, "writers", 4);
  const smallWrites = numberFlag(args, "small-writes", 2000);
  const saturationEvents = numberFlag(args, "saturation-events", 20_000);
  const { info, own } = await server();
  const admin = await KubeClient.create(loadKubeConfig({ kubeconfig: info.kubeconfigs.admin }));
  const run = Date.now().toString(36);
  const hot = `bench-rec-${run}`;
  const tmp = tempJournalPath("krply-bench-recorder-");
  try {
    await ensureNamespace(admin, hot);
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

    // Phase 2: RSS of `krply record` (the shipped CLI in its own process) on realistic objects: 10k
    // ConfigMaps of 4 KiB with 500 Pods, and the small workload (200 ConfigMaps, 20 Deployments with
    // managedFields and status) under writes at the server's rate, whose watch is also captured for
    // phase 3. The small workload is the (200 ConfigMaps and 20 Deployments), so its run
    // records those two resources only.
    const cli = shippedCli();
    const small = await seedNamespace(admin, "rss-small", {
      configMaps: 200,
      deployments: 20,
      seed: 11,
    });
    await seedNamespace(admin, `rss-cold-${watched}`, {
      configMaps: watched,
      deployments: 0,
      seed: 12,
    });
    if (pods > 0)
      await seedNamespace(admin, `rss-pods-${pods}`, {
        configMaps: 0,
        deployments: 0,
        pods,
        seed: 13,
      });
    const big = await recordRss(
      cli.runner,
      info.kubeconfigs.recorder,
      ["rss-small", `rss-cold-${watched}`, ...(pods > 0 ? [`rss-pods-${pods}`] : [])],
      ["configmaps", "deployments", ...(pods > 0 ? ["pods"] : [])],
      async () => {
        await new Promise(r => setTimeout(r, 2000));
      },
    );
    const fromRv = (
      await admin.json<{ metadata: { resourceVersion: string } }>(
        "/api/v1/namespaces/rss-small/configmaps",
        {
          query: { limit: 1 },
        },
      )
    ).metadata.resourceVersion;
    // Captured while the writes happen (see captureWatch), until the small run has ended, on a
    // connection of its own: the writers' PATCHes wait forever on an HTTP/2 connection that also
    // carries these two watches (undici; reproduced with its index import too).
    let ended!: () => void;
    const runEnded = new Promise<void>(r => (ended = r));
    const watcher = await KubeClient.create(loadKubeConfig({ kubeconfig: info.kubeconfigs.admin }));
    const capturing = Promise.all(
      SMALL_WATCHES.map(w => captureWatch(watcher, w, fromRv, smallWrites, 900_000, runEnded)),
    ).finally(() => watcher.close());
    const smallRun = await recordRss(
      cli.runner,
      info.kubeconfigs.recorder,
      ["rss-small"],
      ["configmaps", "deployments"],
      () => writeSmall(admin, small, smallWrites, 4, 21),
    ).finally(ended);
    const capture = await capturing;
    cli.cleanup();

    // Phase 3: saturation. The captured lines, replayed by a fake API server as fast as the socket
    // takes them, against parsing the same lines and inserting them as rows; raw, recorder,
    // recorder, raw, so drift on the shared machine hits both sides alike.
    const per = Math.ceil(saturationEvents / capture.length);
    const replay = capture.map((w, i) => ({
      ...w,
      lines: expand(w.lines, per, 1000 + i * per * 2),
    }));
    const rates = { raw: [] as number[], rec: [] as number[] };
    for (const side of ["raw", "rec", "rec", "raw"] as const) {
      rates[side].push(
        side === "raw" ? rawRate(tmp.dir, replay) : await recorderRate(tmp.dir, replay),
      );
    }
    const recRate = median(rates.rec);
    const rawRateMedian = median(rates.raw);

    const row = (k: string, val: string, target: string) =>
      console.log(`${k.padEnd(38)} ${val.padStart(14)}   ${target}`);
    row("writes acknowledged", String(w.acks.length), "");
    row("server write rate", `${serverRate.toFixed(0)}/s`, "(baseline)");
    row("recorder ingest rate", `${ingestRate.toFixed(0)}/s`, "");
    row(
      "ingest / write ratio",
      (ingestRate / serverRate).toFixed(3),
      verdict(ingestRate / serverRate >= 0.99, ">= 0.99"),
    );
    row("end-to-end lag p50", `${pct(lags, 50).toFixed(1)} ms`, "");
    row(
      "end-to-end lag p99",
      `${pct(lags, 99).toFixed(1)} ms`,
      verdict(pct(lags, 99) < 500, "< 500 ms"),
    );
    row("end-to-end lag max", `${lags[lags.length - 1].toFixed(1)} ms`, "");
    row(
      `RSS, ${watched} CMs of 4 KiB + ${pods} Pods`,
      `${big.rss.toFixed(1)} MiB`,
      verdict(big.rss < 200, "< 200 MiB"),
    );
    row("  peak (VmHWM)", `${big.hwm.toFixed(1)} MiB`, "");
    row("RSS, 200 CMs + 20 Deployments", `${smallRun.rss.toFixed(1)} MiB`, `${smallWrites} writes`);
    row("  peak (VmHWM)", `${smallRun.hwm.toFixed(1)} MiB`, verdict(smallRun.hwm < 80, "< 80 MiB"));
    const lines = replay.reduce((n, w) => n + w.lines.length, 0);
    row(
      "saturation: lines replayed",
      String(lines),
      capture.map(w => `${w.lines.length} ${w.resource}`).join(", "),
    );
    row(
      "  raw parse + insert",
      `${rawRateMedian.toFixed(0)}/s`,
      `(baseline) median of ${rates.raw.map(r => r.toFixed(0)).join(", ")}`,
    );
    row(
      "  recorder",
      `${recRate.toFixed(0)}/s`,
      `median of ${rates.rec.map(r => r.toFixed(0)).join(", ")}`,
    );
    row("  recorder / raw", (recRate / rawRateMedian).toFixed(3), "");
    row(
      "  headroom over server writes",
      `${(recRate / serverRate).toFixed(1)}x`,
      `server ${serverRate.toFixed(0)}/s`,
    );
    row("missed events", String(v.lost), verdict(v.lost === 0, "0"));
    row(
      "duplicates / out of order",
      `${v.duplicates} / ${v.outOfOrder}`,
      verdict(v.duplicates === 0 && v.outOfOrder === 0, "0 / 0"),
    );
  } finally {
    await admin.close();
    tmp.cleanup();
    await own?.dispose();
  }
}
