// Faults that need an API server of our own: restarts, compaction, and the ground-truth workload.
import { streamIdOf } from "../../src/event";
import type { JournalRecord, StreamKey } from "../../src/event";
import { KubeClient, loadKubeConfig } from "../../src/kube/client";
import { tempJournalPath } from "../support/journal-fixtures";
import { clusterIdentity } from "../../src/watch/cluster-identity";
import { startApiServer, type ApiServer } from "../apiserver";
import { allRecords, cmKey, fastEngine, rig, until, type Rig } from "./recorder-support";
import {
  createConfigMaps,
  deliveriesOf,
  ensureNamespace,
  gapWindows,
  runWriters,
  verify,
  type Ack,
} from "./recorder-workload";

jest.setTimeout(300_000);

const spec = (key: StreamKey) => ({
  key,
  kind: "ConfigMap",
  path: `/api/v1/namespaces/${key.namespace}/configmaps`,
});

/** Event RVs of one stream must rise strictly in journal order (the oracle may compare etcd RVs). */
function streamOrderViolations(recs: JournalRecord[]): number {
  let bad = 0;
  let last = -1;
  for (const r of recs) {
    if (r.type === "baseline" && r.baseline) last = Number(r.baseline.listResourceVersion);
    if (r.type !== "event") continue;
    const rv = Number(r.resource!.resourceVersion);
    if (rv <= last) bad++;
    last = rv;
  }
  return bad;
}

const maxRv = (acks: Ack[]) => acks.reduce((m, a) => Math.max(m, Number(a.rv)), 0);

// Without a watch cache (configmaps) a stream gets no bookmarks, so it only reaches RVs written in its
// own namespace: wait for each stream's own last write.
async function caughtUp(r: Rig, ids: string[], rvs: number[]): Promise<void> {
  await until(
    `journal at RVs ${rvs.join(",")}`,
    () =>
      ids.every((id, i) => {
        const s = r.journal.streams().find(x => x.streamId === id);
        return s?.lastResourceVersion && Number(s.lastResourceVersion) >= rvs[i];
      }),
    60_000,
  );
}

describe("recorder across API-server restarts and compaction", () => {
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

  it("resumes from its checkpoint after the recorder restarts, and writes one GAP then a BASELINE after compaction", async () => {
    const ns = "rec-resume";
    await ensureNamespace(admin, ns);
    const targets = (await createConfigMaps(admin, ns, 10)).map(a => ({ ns, name: a.name }));
    const key = cmKey(clusterId, ns);
    const id = streamIdOf(key);
    const tmp = tempJournalPath("krply-resume-");
    let r = await rig(server.kubeconfigs.recorder, fastEngine, tmp.path);
    r.supervisor.add(spec(key));
    await until(
      "baseline",
      () => r.journal.streams().find(s => s.streamId === id)?.baselinePresent,
    );
    const first = await runWriters({ client: admin, targets, writers: 2, total: 100 });
    await caughtUp(r, [id], [maxRv(first.acks)]);
    await r.close(true);

    // Restart inside the etcd window: resume from the checkpoint, no relist, nothing lost.
    const down1 = await runWriters({ client: admin, targets, writers: 2, total: 100 });
    r = await rig(server.kubeconfigs.recorder, fastEngine, tmp.path);
    r.supervisor.add(spec(key));
    await caughtUp(r, [id], [maxRv(down1.acks)]);
    let recs = allRecords(r.journal, id);
    expect(recs.filter(x => x.type === "baseline" && x.baseline)).toHaveLength(1);
    expect(verify([...first.acks, ...down1.acks], deliveriesOf(recs))).toMatchObject({
      lost: 0,
      duplicates: 0,
      outOfOrder: 0,
    });
    const durable = r.journal.streams().find(s => s.streamId === id)!.lastResourceVersion!;
    await r.close(true);

    // Restart outside it: the checkpoint was compacted away, so exactly one honest GAP, then a BASELINE.
    const down2 = await runWriters({ client: admin, targets, writers: 2, total: 100 });
    const compacted = await server.compact();
    r = await rig(server.kubeconfigs.recorder, fastEngine, tmp.path);
    r.supervisor.add(spec(key));
    await until(
      "a second baseline",
      () => r.journal.baselines(id).filter(b => b.baseline).length === 2,
    );
    const after = await runWriters({ client: admin, targets, writers: 2, total: 50 });
    await caughtUp(r, [id], [maxRv(after.acks)]);
    recs = allRecords(r.journal, id);
    const gaps = recs.filter(x => x.type === "gap");
    expect(gaps).toHaveLength(1);
    expect(gaps[0].gap!.lastGoodResourceVersion).toBe(durable);
    const gapAt = recs.indexOf(gaps[0]);
    const nextMarker = recs.slice(gapAt).find(x => x.type === "baseline" && x.baseline)!;
    expect(Number(nextMarker.baseline!.listResourceVersion)).toBeGreaterThanOrEqual(
      Number(compacted.compactedRevision),
    );
    expect(r.journal.streams().find(s => s.streamId === id)!.openGaps).toBe(0);
    const v = verify([...down2.acks, ...after.acks], deliveriesOf(recs), gapWindows(recs));
    expect({ unmarked: v.unmarkedLost, dup: v.duplicates, ooo: v.outOfOrder }).toEqual({
      unmarked: 0,
      dup: 0,
      ooo: 0,
    });
    expect(streamOrderViolations(recs)).toBe(0);
    await r.close();
    tmp.cleanup();
  });

  it("ground truth: thousands of writes from several writers with disconnects, an API-server restart and compaction", async () => {
    const nss = ["rec-gt-a", "rec-gt-b"];
    const targets: { ns: string; name: string }[] = [];
    for (const ns of nss) {
      await ensureNamespace(admin, ns);
      targets.push(...(await createConfigMaps(admin, ns, 40)).map(a => ({ ns, name: a.name })));
    }
    const keys = nss.map(ns => cmKey(clusterId, ns));
    const ids = keys.map(k => streamIdOf(k));
    const tmp = tempJournalPath("krply-gt-");
    let r = await rig(server.kubeconfigs.recorder, fastEngine, tmp.path);
    for (const k of keys) r.supervisor.add(spec(k));
    await until("baselines", () => ids.every(id => r.journal.baselines(id).some(b => b.baseline)));
    const listRvs = ids.map(id =>
      Number(r.journal.baselines(id).find(b => b.baseline)!.baseline!.listResourceVersion),
    );

    let acked = 0;
    const faults: string[] = [];
    const total = 4000;
    const writing = runWriters({
      client: admin,
      targets,
      writers: 4,
      total,
      retry: true,
      onAck: () => void acked++,
    });
    const at = (n: number) => until(`${n} acks`, () => acked >= n, 120_000, 10);
    await at(600);
    r.supervisor.interrupt();
    faults.push("disconnect all streams");
    await at(1200);
    await server.restart();
    faults.push("API server restart");
    await at(2000);
    r.supervisor.interrupt(ids[0]);
    faults.push("disconnect one stream");
    await at(2600);
    await r.close(true);
    await at(2900);
    await server.compact();
    faults.push("recorder down + compaction");
    r = await rig(server.kubeconfigs.recorder, fastEngine, tmp.path);
    for (const k of keys) r.supervisor.add(spec(k));
    const { acks, failures } = await writing;
    expect(acks).toHaveLength(total);
    await caughtUp(
      r,
      ids,
      nss.map(ns => maxRv(acks.filter(a => a.ns === ns))),
    );

    const report: Record<string, unknown> = { faults, writeRetries: failures };
    keys.forEach((k, i) => {
      const recs = allRecords(r.journal, ids[i]);
      const mine = acks.filter(a => a.ns === k.namespace && Number(a.rv) > listRvs[i]);
      const v = verify(mine, deliveriesOf(recs), gapWindows(recs));
      report[k.namespace] = { ...v, gaps: recs.filter(x => x.type === "gap").length };
      expect(v.unmarkedLost).toBe(0);
      expect(v.duplicates).toBe(0);
      expect(v.outOfOrder).toBe(0);
      expect(streamOrderViolations(recs)).toBe(0);
      expect(recs.filter(x => x.type === "gap")).toHaveLength(1);
    });
    // Printed so the numbers can be quoted; the assertions above are the contract.
    console.log(JSON.stringify(report, null, 1));
    await r.close();
    tmp.cleanup();
  });
});
