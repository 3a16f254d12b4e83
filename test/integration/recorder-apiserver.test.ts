// The stream engine against the real kube-apiserver shared by the integration project.
import { randomBytes } from "node:crypto";
import { streamIdOf } from "../../src/event";
import type { StreamKey } from "../../src/event";
import { KubeClient, loadKubeConfig } from "../../src/kube/client";
import { ApiError } from "../../src/kube/errors";
import { clusterIdentity } from "../../src/watch/cluster-identity";
import { Recorder } from "../../src/watch/recorder";
import { tempJournalPath } from "../support/journal-fixtures";
import { sharedApiServer } from "../apiserver/shared";
import { allRecords, cmKey, eventRvs, fastEngine, rig, until, type Rig } from "./recorder-support";
import {
  createConfigMaps,
  deliveriesOf,
  ensureNamespace,
  runWriters,
  verify,
} from "./recorder-workload";

const suffix = () => randomBytes(3).toString("hex");

jest.setTimeout(120_000);

describe("recorder against the real API server", () => {
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

  async function recorderRig(kubeconfig = api.kubeconfigs.recorder, engine = fastEngine) {
    const r = await rig(kubeconfig, engine);
    rigs.push(r);
    return r;
  }

  const cmSpec = (key: StreamKey) => ({
    key,
    kind: "ConfigMap",
    path: `/api/v1/namespaces/${key.namespace}/configmaps`,
  });

  it("starts at the exact list RV: nothing before it duplicated, nothing after it missed, order kept", async () => {
    const ns = `rec-exact-${suffix()}`;
    await ensureNamespace(admin, ns);
    const created = await createConfigMaps(admin, ns, 20);
    const targets = created.map(a => ({ ns, name: a.name }));
    const r = await recorderRig();
    const key = cmKey(clusterId, ns);
    const id = streamIdOf(key);
    // Writes run while the stream lists and starts watching, so the list RV falls mid-workload.
    const writing = runWriters({ client: admin, targets, writers: 3, total: 600 });
    r.supervisor.add(cmSpec(key));
    const { acks } = await writing;
    const lastRv = acks.reduce((m, a) => Math.max(m, Number(a.rv)), 0);
    await until("journal caught up", () =>
      allRecords(r.journal, id).some(x => Number(x.resource?.resourceVersion ?? 0) >= lastRv),
    );
    const recs = allRecords(r.journal, id);
    const marker = recs.find(x => x.type === "baseline" && x.baseline)!;
    const listRv = Number(marker.baseline!.listResourceVersion);
    // The baseline is the state at listRv: one synthetic record per object, none newer than the list.
    const baseline = recs.filter(x => x.type === "baseline" && x.object);
    expect(baseline).toHaveLength(20);
    expect(baseline.every(x => Number(x.resource!.resourceVersion) <= listRv)).toBe(true);
    const live = deliveriesOf(recs);
    expect(live.every(d => Number(d.rv) > listRv)).toBe(true);
    const after = acks.filter(a => Number(a.rv) > listRv);
    const v = verify(after, live);
    expect({ lost: v.lost, duplicates: v.duplicates, outOfOrder: v.outOfOrder }).toEqual({
      lost: 0,
      duplicates: 0,
      outOfOrder: 0,
    });
    expect(v.delivered).toBe(after.length);
    // Strict stream order: journal order is RV order.
    const rvs = eventRvs(recs).map(Number);
    expect(rvs).toEqual([...rvs].sort((a, b) => a - b));
    expect(r.journal.gaps(id)).toHaveLength(0);
  });

  it("turns bookmarks into checkpoints only", async () => {
    const ns = `rec-bm-${suffix()}`;
    await ensureNamespace(admin, ns);
    // Services go through the watch cache, which sends a bookmark shortly before timeoutSeconds ends.
    const r = await recorderRig(api.kubeconfigs.recorder, {
      ...fastEngine,
      watchTimeoutMinS: 4,
      watchTimeoutMaxS: 5,
    });
    const key: StreamKey = {
      clusterId,
      group: "",
      version: "v1",
      resource: "services",
      namespace: ns,
      selector: "",
    };
    const id = streamIdOf(key);
    r.supervisor.add({ key, kind: "Service", path: `/api/v1/namespaces/${ns}/services` });
    await until(
      "baseline",
      () => r.journal.streams().find(s => s.streamId === id)?.baselinePresent,
    );
    await admin.json(`/api/v1/namespaces/${ns}/services`, {
      method: "POST",
      body: {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "svc-a" },
        spec: { clusterIP: "None", ports: [{ port: 80 }] },
      },
    });
    const bm = await until(
      "a bookmark checkpoint",
      () => {
        const cps = allRecords(r.journal, id).filter(
          x => x.type === "checkpoint" && x.checkpoint?.bookmark,
        );
        return cps.length > 0 && cps;
      },
      30_000,
    );
    const recs = allRecords(r.journal, id);
    expect(recs.filter(x => x.type === "event").map(x => x.resource!.name)).toEqual(["svc-a"]);
    expect(bm.every(x => !x.object && x.watchType === "BOOKMARK")).toBe(true);
    const stream = r.journal.streams().find(s => s.streamId === id)!;
    expect(Number(stream.lastResourceVersion)).toBeGreaterThanOrEqual(
      Number(bm[0].checkpoint!.resourceVersion),
    );
  });

  it("writes COVERAGE_CHANGE when RBAC is revoked and again when it returns", async () => {
    const ns = `rec-rbac-${suffix()}`;
    await ensureNamespace(admin, ns);
    const rbac = `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}`;
    await admin.json(`${rbac}/roles`, {
      method: "POST",
      body: {
        metadata: { name: "read-cm" },
        rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list", "watch"] }],
      },
    });
    const binding = {
      metadata: { name: "nobody-read-cm" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "read-cm" },
      subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "nobody" }],
    };
    await admin.json(`${rbac}/rolebindings`, { method: "POST", body: binding });
    // "nobody" reads this one namespace only through the binding above, so deleting it revokes access.
    const r = await recorderRig(api.kubeconfigs.nobody, {
      ...fastEngine,
      watchTimeoutMinS: 2,
      watchTimeoutMaxS: 2,
    });
    const key = cmKey(clusterId, ns);
    const id = streamIdOf(key);
    r.supervisor.add(cmSpec(key));
    await until(
      "baseline",
      () => r.journal.streams().find(s => s.streamId === id)?.baselinePresent,
    );
    await admin.json(`${rbac}/rolebindings/nobody-read-cm`, { method: "DELETE" });
    await until(
      "coverage unavailable",
      () => allRecords(r.journal, id).some(x => x.coverage?.state === "unavailable"),
      30_000,
    );
    expect(r.journal.streams().find(s => s.streamId === id)!.state).toBe("unavailable");
    await admin.json(`${rbac}/rolebindings`, { method: "POST", body: binding });
    await admin.json(`/api/v1/namespaces/${ns}/configmaps`, {
      method: "POST",
      body: { metadata: { name: "after-regrant" }, data: {} },
    });
    await until(
      "coverage available and the new object recorded",
      () => {
        const recs = allRecords(r.journal, id);
        return (
          recs.some(x => x.coverage?.state === "available") &&
          recs.some(x => x.resource?.name === "after-regrant")
        );
      },
      30_000,
    );
    const cov = allRecords(r.journal, id).filter(x => x.type === "coverage_change");
    expect(cov.map(x => [x.coverage!.state, x.coverage!.httpStatus])).toEqual([
      ["unavailable", 403],
      ["available", undefined],
    ]);
  });

  it("records a CRD created after start, and stops its stream when the CRD is deleted", async () => {
    const group = `g${suffix()}.krply.test`;
    const tmp = tempJournalPath("krply-crd-");
    const rec = new Recorder({
      journalPath: tmp.path,
      kubeconfig: api.kubeconfigs.admin,
      selection: { resources: [`*.${group}`], namespaces: [], selector: "" },
      engine: fastEngine,
      mirrorEveryMs: 60_000,
      journalRetryMs: 0,
    });
    try {
      await rec.start();
      expect(rec.status()).toHaveLength(0);
      const crdPath = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
      await admin.json(crdPath, {
        method: "POST",
        body: {
          metadata: { name: `widgets.${group}` },
          spec: {
            group,
            scope: "Namespaced",
            names: { plural: "widgets", singular: "widget", kind: "Widget" },
            versions: [
              {
                name: "v1",
                served: true,
                storage: true,
                schema: {
                  openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
                },
              },
            ],
          },
        },
      });
      // What the Reconcile binding does: hand each CRD update to the recorder.
      let established: unknown;
      for (let i = 0; i < 150; i++) {
        const c = await admin.json<{
          status?: { conditions?: { type: string; status: string }[] };
        }>(`${crdPath}/widgets.${group}`);
        await rec.onCrd(c, "MODIFIED");
        if (c.status?.conditions?.some(x => x.type === "Established" && x.status === "True")) {
          established = c;
          break;
        }
        await new Promise(res => setTimeout(res, 200));
      }
      expect(established).toBeDefined();
      expect(rec.status()).toHaveLength(1);
      await until("widget stream watching", () => rec.status()[0].phase === "watching", 30_000);
      await admin.json(`/apis/${group}/v1/namespaces/default/widgets`, {
        method: "POST",
        body: {
          apiVersion: `${group}/v1`,
          kind: "Widget",
          metadata: { name: "w1" },
          spec: { a: 1 },
        },
      });
      const j = rec.openJournal!;
      const id = rec.status()[0].streamId;
      await until("widget event", () => allRecords(j, id).some(x => x.resource?.name === "w1"));
      await admin.json(`${crdPath}/widgets.${group}`, { method: "DELETE" });
      await rec.onCrd(established, "DELETED");
      expect(rec.status()).toHaveLength(0);
      const types = allRecords(j, id).map(x =>
        x.type === "coverage_change" ? `coverage:${x.coverage!.state}` : x.type,
      );
      expect(types[0]).toBe("coverage:available");
      expect(types).toContain("event");
      expect(types[types.length - 1]).toBe("coverage:stopped");
    } finally {
      await rec.stop();
      tmp.cleanup();
    }
  });

  it("reports a 403 for a resource the user may not read as a typed ApiError", async () => {
    const nobody = await KubeClient.create(loadKubeConfig({ kubeconfig: api.kubeconfigs.nobody }));
    try {
      await expect(nobody.json("/api/v1/secrets")).rejects.toMatchObject({
        status: 403,
        reason: "Forbidden",
      });
      await expect(nobody.json("/api/v1/secrets")).rejects.toBeInstanceOf(ApiError);
    } finally {
      await nobody.close();
    }
  });
});
