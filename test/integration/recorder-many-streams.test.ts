// 300 streams against the real API server: more watches than any connection cap of the old client (64).
import { randomBytes } from "node:crypto";
import { streamIdOf } from "../../src/event";
import { KubeClient, loadKubeConfig } from "../../src/kube/client";
import { clusterIdentity } from "../../src/watch/cluster-identity";
import { Supervisor } from "../../src/watch/supervisor";
import { sharedApiServer } from "../apiserver/shared";
import { openJournal } from "../../src/journal";
import { tempJournalPath } from "../support/journal-fixtures";
import { cmKey, fastEngine, until } from "./recorder-support";
import { ensureNamespace } from "./recorder-workload";

const STREAMS = 300;

jest.setTimeout(300_000);

async function inBatches<T>(items: T[], size: number, run: (t: T) => Promise<unknown>) {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(run));
}

describe("300 streams against the real API server", () => {
  const api = sharedApiServer();

  it("every stream reaches its baseline and stays live; end-to-end lag p99 stays under 1 s", async () => {
    const admin = await KubeClient.create(loadKubeConfig({ kubeconfig: api.kubeconfigs.admin }));
    const client = await KubeClient.create(
      loadKubeConfig({ kubeconfig: api.kubeconfigs.recorder }),
    );
    const tmp = tempJournalPath("krply-many-");
    const journal = openJournal(tmp.path, { sync: "NORMAL" });
    // Commit time of every object RV, to measure write-acknowledged to durable.
    const committedAt = new Map<string, number>();
    const supervisor = new Supervisor({
      client,
      journal,
      engine: fastEngine,
      onCommit: (items, at) => {
        for (const it of items)
          for (const r of it.records)
            if (r.resource) committedAt.set(r.resource.resourceVersion, at);
      },
    });
    try {
      // The harness serves HTTP/2, so the watches share a few connections.
      expect(client.protocol).toBe("h2");
      const clusterId = (await clusterIdentity(admin)).clusterId;
      const tag = randomBytes(3).toString("hex");
      const namespaces = Array.from({ length: STREAMS }, (_, i) => `many-${tag}-${i}`);
      await inBatches(namespaces, 20, ns => ensureNamespace(admin, ns));
      await inBatches(namespaces, 20, ns =>
        admin.json(`/api/v1/namespaces/${ns}/configmaps`, {
          method: "POST",
          body: {
            apiVersion: "v1",
            kind: "ConfigMap",
            metadata: { name: "seed" },
            data: { v: "0" },
          },
        }),
      );
      const keys = namespaces.map(ns => cmKey(clusterId, ns));
      for (const key of keys) {
        supervisor.add({
          key,
          kind: "ConfigMap",
          path: `/api/v1/namespaces/${key.namespace}/configmaps`,
        });
      }
      // Every stream lists, commits its baseline and opens its watch.
      const started = Date.now();
      await until(
        "every stream watching",
        () => {
          const st = supervisor.status();
          return st.length === STREAMS && st.every(s => s.phase === "watching");
        },
        120_000,
        100,
      );
      const liveAfterMs = Date.now() - started;
      const baselines = new Set(
        journal
          .streams()
          .filter(s => s.baselinePresent)
          .map(s => s.streamId),
      );
      expect(keys.filter(k => !baselines.has(streamIdOf(k)))).toEqual([]);
      expect(client.waitingRequests()).toBe(0);

      // Then one write per namespace, three rounds: every stream delivers each while it stays live.
      const lags: number[] = [];
      for (let round = 1; round <= 3; round++) {
        const acks: { rv: string; at: number }[] = [];
        await inBatches(namespaces, 25, async ns => {
          const o = await admin.json<{ metadata: { resourceVersion: string } }>(
            `/api/v1/namespaces/${ns}/configmaps/seed`,
            {
              method: "PATCH",
              contentType: "application/merge-patch+json",
              body: { data: { v: String(round) } },
            },
          );
          acks.push({ rv: o.metadata.resourceVersion, at: Date.now() });
        });
        await until("every write committed", () => acks.every(a => committedAt.has(a.rv)), 60_000);
        for (const a of acks) lags.push(Math.max(0, committedAt.get(a.rv)! - a.at));
      }
      lags.sort((a, b) => a - b);
      const p50 = lags[Math.floor(lags.length * 0.5)];
      const p99 = lags[Math.floor(lags.length * 0.99)];
      process.stdout.write(
        `300 streams: all watching ${liveAfterMs} ms after start; lag over ${lags.length} writes p50 ${p50} ms, p99 ${p99} ms\n`,
      );
      expect(p99).toBeLessThan(1000);
      const st = supervisor.status();
      expect(st.filter(s => s.phase !== "watching")).toEqual([]);
      expect(st.filter(s => s.gaps > 0)).toEqual([]);
    } finally {
      await supervisor.stop();
      await client.close();
      await admin.close();
      journal.close();
      tmp.cleanup();
    }
  });
});
