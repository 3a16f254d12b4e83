// A gap window starts where continuity was last proven (issue 13), against an API server of our
// own that restarts and compacts while the recorder is down.
import { streamIdOf } from "../../src/event";
import { KubeClient, loadKubeConfig } from "../../src/kube/client";
import { objectAt } from "../../src/materialize";
import { clusterIdentity } from "../../src/watch/cluster-identity";
import { startApiServer, type ApiServer } from "../apiserver";
import { tempJournalPath } from "../support/journal-fixtures";
import { allRecords, cmKey, fastEngine, rig, until } from "./recorder-support";
import { createConfigMaps, ensureNamespace, runWriters } from "./recorder-workload";

jest.setTimeout(300_000);

describe("gap windows across an API-server restart", () => {
  let server: ApiServer;
  let admin: KubeClient;
  let clusterId: string;

  beforeAll(async () => {
    server = await startApiServer();
    admin = await KubeClient.create(loadKubeConfig({ kubeconfig: server.kubeconfigs.admin }));
    clusterId = (await clusterIdentity(admin)).clusterId;
  });
  afterAll(async () => {
    await admin?.close();
    await server?.dispose();
  });

  it("starts at the record of the last good RV, so writes lost in the real gap lie inside it", async () => {
    const ns = "cov-restart";
    await ensureNamespace(admin, ns);
    const targets = (await createConfigMaps(admin, ns, 5)).map(a => ({ ns, name: a.name }));
    const key = cmKey(clusterId, ns);
    const id = streamIdOf(key);
    const spec = { key, kind: "ConfigMap", path: `/api/v1/namespaces/${ns}/configmaps` };
    const tmp = tempJournalPath("krply-cov-restart-");
    let r = await rig(server.kubeconfigs.recorder, fastEngine, tmp.path);
    r.supervisor.add(spec);
    await until(
      "baseline",
      () => r.journal.streams().find(s => s.streamId === id)?.baselinePresent,
    );
    const before = await runWriters({ client: admin, targets, writers: 1, total: 10 });
    const lastRv = before.acks.at(-1)!.rv;
    await until("caught up", () =>
      allRecords(r.journal, id).some(x => x.resource?.resourceVersion === lastRv),
    );
    const lastGood = allRecords(r.journal, id).find(x => x.resource?.resourceVersion === lastRv)!;
    await r.close(true);

    // While the recorder is down the server restarts, takes writes, and compacts them away.
    await server.restart();
    const lost = await runWriters({ client: admin, targets, writers: 1, total: 10, retry: true });
    await server.compact();
    await new Promise(res => setTimeout(res, 300));

    // The restart writes a coverage change (announce) before the watch meets the 410.
    r = await rig(server.kubeconfigs.recorder, fastEngine, tmp.path);
    r.supervisor.add(spec, "recorder restarted");
    try {
      await until("the relist", () => r.journal.gaps(id)[0]?.gap?.resolvedByBaselineRv);
      const recs = allRecords(r.journal, id);
      const gapAt = recs.findIndex(x => x.type === "gap");
      expect(recs.slice(0, gapAt).some(x => x.type === "coverage_change")).toBe(true);
      const [w] = r.journal.gapWindows(id);
      expect(w.fromMs).toBe(Date.parse(lastGood.observedAt));
      // Every write the recorder never saw was acknowledged inside the reported window.
      for (const a of lost.acks) {
        expect(a.at).toBeGreaterThan(w.fromMs);
        expect(a.at).toBeLessThan(w.toMs!);
      }
      // So an answer about any of those moments is not called complete.
      const mid = new Date(lost.acks[Math.floor(lost.acks.length / 2)].at).toISOString();
      const a = objectAt(
        r.journal,
        clusterId,
        { kind: "ConfigMap", namespace: ns, name: targets[0].name },
        { time: mid },
      );
      expect(a.coverage.complete).toBe(false);
      expect(a.coverage.gaps).toHaveLength(1);
    } finally {
      await r.close();
      tmp.cleanup();
    }
  });
});
