// Replay benchmark against a real kube-apiserver: plan 1,000 recorded ConfigMaps (mixed sizes) into a
// new namespace and dry-run them (preflight included). The baseline is a bare loop of the same dry-run
// PATCHes (same manifests, query and concurrency) with nothing else around them, in the same run.
import { existsSync } from "node:fs";
import { openJournalView } from "../src/journal";
import { KubeClient, loadKubeConfig } from "../src/kube/client";
import { applyPatch, dryRunPlan, mapBounded, planFromJournal, type Plan } from "../src/replay";
import { clusterIdentity } from "../src/watch/cluster-identity";
import { Recorder } from "../src/watch/recorder";
import { startApiServer, type ApiServer } from "../test/apiserver";
import { readApiServerInfo, type ApiServerInfo } from "../test/apiserver/types";
import { tempJournalPath } from "../test/support/journal-fixtures";
import { ensureNamespace } from "../test/support/replay-fixtures";
import { numberFlag } from "./lib-flags";

async function server(): Promise<{ info: ApiServerInfo; own?: ApiServer }> {
  const ext = process.env.KRPLY_APISERVER_INFO;
  if (ext && existsSync(ext)) return { info: readApiServerInfo(ext) };
  const own = await startApiServer();
  return { info: own.info, own };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Runs the benchmark; flags: --objects N (1000), --concurrency N (8), --rounds N (3). */
export async function main(args: string[]): Promise<void> {
  const objects = numberFlag(args, "objects", 1000);
  const concurrency = numberFlag(args, "concurrency", 8);
  const rounds = numberFlag(args, "rounds", 3);
  const { info, own } = await server();
  const admin = await KubeClient.create(loadKubeConfig({ kubeconfig: info.kubeconfigs.admin }));
  const run = Date.now().toString(36);
  const src = `bench-rpl-${run}`;
  const dst = `bench-rpl-${run}-to`;
  const tmp = tempJournalPath("krply-bench-replay-");
  let recorder: Recorder | undefined;
  try {
    await ensureNamespace(admin, src);
    await ensureNamespace(admin, dst);
    let last = "0";
    await mapBounded(
      Array.from({ length: objects }, (_, i) => i),
      8,
      async i => {
        const data: Record<string, string> = {};
        for (let k = 0; k < 1 + (i % 8); k++) data[`key-${k}`] = `value ${i} ${"x".repeat(40 * k)}`;
        const o = await admin.json<{ metadata: { resourceVersion: string } }>(
          `/api/v1/namespaces/${src}/configmaps`,
          {
            method: "POST",
            body: {
              metadata: { name: `cm-${i}`, labels: { app: "bench", n: String(i % 10) } },
              data,
            },
          },
        );
        if (BigInt(o.metadata.resourceVersion) > BigInt(last)) last = o.metadata.resourceVersion;
      },
    );
    recorder = new Recorder({
      journalPath: tmp.path,
      kubeconfig: info.kubeconfigs.recorder,
      selection: { resources: ["namespaces", "configmaps"], namespaces: [src], selector: "" },
      journal: { sync: "NORMAL" },
      mirrorEveryMs: 60_000,
      journalRetryMs: 0,
    });
    await recorder.start();
    for (const deadline = Date.now() + 120_000; ; ) {
      const s = recorder.status().find(st => st.key.resource === "configmaps");
      if (s?.durableRv && BigInt(s.durableRv) >= BigInt(last)) break;
      if (Date.now() > deadline) throw new Error("recorder did not catch up");
      await new Promise(r => setTimeout(r, 50));
    }
    await new Promise(r => setTimeout(r, 20));
    const at = new Date().toISOString();
    await recorder.stop();
    recorder = undefined;

    const id = await clusterIdentity(admin);
    const view = openJournalView(tmp.path);
    const target = { clusterId: id.clusterId, server: id.server, isSource: true };
    const krply: number[] = [];
    const bare: number[] = [];
    const planMs: number[] = [];
    let plan: Plan | undefined;
    const bareLoop = async (p: Plan): Promise<number> => {
      const t0 = performance.now();
      await mapBounded(p.objects, concurrency, o =>
        applyPatch(admin, o.ref, o.manifest, p.fieldManager, true),
      );
      return performance.now() - t0;
    };
    // A warm-up of each, so connections and the server's caches are in the same state for both.
    plan = planFromJournal(view, {
      at,
      sourceNamespaces: [src],
      target,
      policy: { namespaceMap: { [src]: dst } },
    });
    await bareLoop(plan);
    await dryRunPlan(admin, plan, { concurrency });
    for (let r = 0; r < rounds; r++) {
      const t0 = performance.now();
      plan = planFromJournal(view, {
        at,
        sourceNamespaces: [src],
        target,
        policy: { namespaceMap: { [src]: dst } },
      });
      const t1 = performance.now();
      const d = await dryRunPlan(admin, plan, { concurrency });
      const t2 = performance.now();
      if (!d.ok || d.counts["would-create"] !== objects)
        throw new Error(`unexpected verdicts: ${JSON.stringify(d.counts)}`);
      planMs.push(t1 - t0);
      krply.push(t2 - t0);
      bare.push(await bareLoop(plan));
    }
    view.close();
    const n = plan.objects.length;
    const kRate = (n / median(krply)) * 1000;
    const bRate = (n / median(bare)) * 1000;
    console.log(
      JSON.stringify(
        {
          objects: n,
          concurrency,
          rounds,
          planMsMedian: Math.round(median(planMs)),
          krplyMsMedian: Math.round(median(krply)),
          bareMsMedian: Math.round(median(bare)),
          krplyObjectsPerSec: Math.round(kRate),
          bareObjectsPerSec: Math.round(bRate),
          ratio: Number((kRate / bRate).toFixed(3)),
          target: ">= 0.8",
        },
        null,
        2,
      ),
    );
  } finally {
    await recorder?.stop();
    for (const ns of [src, dst])
      await admin.json(`/api/v1/namespaces/${ns}`, { method: "DELETE" }).catch(() => undefined);
    await admin.close();
    tmp.cleanup();
    await own?.dispose();
  }
}
