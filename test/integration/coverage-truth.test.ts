// Coverage that never lies (issue 13), against the real API server shared by the integration project.
import { randomBytes } from "node:crypto";
import { streamIdOf } from "../../src/event";
import type { StreamKey } from "../../src/event";
import { KubeClient, loadKubeConfig } from "../../src/kube/client";
import { timeline } from "../../src/materialize";
import { clusterIdentity } from "../../src/watch/cluster-identity";
import { sharedApiServer } from "../apiserver/shared";
import { cmKey, fastEngine, rig, until, type Rig } from "./recorder-support";
import { ensureNamespace } from "./recorder-workload";

const suffix = () => randomBytes(3).toString("hex");

jest.setTimeout(120_000);

const cmSpec = (key: StreamKey) => ({
  key,
  kind: "ConfigMap",
  path: `/api/v1/namespaces/${key.namespace}/configmaps`,
});

describe("coverage that never lies (real API server)", () => {
  const api = sharedApiServer();
  let admin: KubeClient;
  let clusterId: string;
  const rigs: Rig[] = [];

  beforeAll(async () => {
    admin = await KubeClient.create(loadKubeConfig({ kubeconfig: api.kubeconfigs.admin }));
    clusterId = (await clusterIdentity(admin)).clusterId;
  });
  afterAll(async () => {
    for (const r of rigs) await r.close();
    await admin.close();
  });

  it("no false changes: after a list, a watch event that changes one field shows only that field", async () => {
    const ns = `cov-norm-${suffix()}`;
    await ensureNamespace(admin, ns);
    await admin.json(`/api/v1/namespaces/${ns}/configmaps`, {
      method: "POST",
      body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "one" }, data: { a: "1" } },
    });
    const r = await rig(api.kubeconfigs.recorder, fastEngine);
    rigs.push(r);
    const key = cmKey(clusterId, ns);
    const id = streamIdOf(key);
    r.supervisor.add(cmSpec(key));
    await until(
      "baseline",
      () => r.journal.streams().find(s => s.streamId === id)?.baselinePresent,
    );
    await until("watching", () => r.supervisor.status()[0]?.phase === "watching");
    await admin.json(`/api/v1/namespaces/${ns}/configmaps/one`, {
      method: "PATCH",
      contentType: "application/merge-patch+json",
      body: { data: { a: "2" } },
    });
    await until(
      "the change",
      () => r.journal.events({ streamId: id, types: ["event"] }).records.length > 0,
    );
    const t = timeline(r.journal, clusterId, { kind: "ConfigMap", namespace: ns, name: "one" });
    expect(t.data.map(e => e.changes.map(c => c.path))).toEqual([[], ["data.a"]]);
  });
});
