// Coverage that never lies (issue 13), against the real API server shared by the integration project.
import { randomBytes } from "node:crypto";
import { parseStreamId, streamIdOf } from "../../src/event";
import type { JournalRecord, StreamKey } from "../../src/event";
import { openJournal, openJournalView } from "../../src/journal";
import { KubeClient, loadKubeConfig } from "../../src/kube/client";
import { ApiError } from "../../src/kube/errors";
import { OBSERVED_LATE, objectAt, snapshot, timeline } from "../../src/materialize";
import { clusterIdentity } from "../../src/watch/cluster-identity";
import { Recorder, type RecorderConfig } from "../../src/watch/recorder";
import { buildTools, startKrply } from "../support/built-cli";
import { crdOf } from "../support/crd";
import { tempJournalPath } from "../support/journal-fixtures";
import { sharedApiServer } from "../apiserver/shared";
import { allRecords, cmKey, fastEngine, rig, until, type Rig } from "./recorder-support";
import { ensureNamespace } from "./recorder-workload";

const suffix = () => randomBytes(3).toString("hex");

jest.setTimeout(120_000);

const sleep = (ms: number) => new Promise(r => setTimeout(r, ms));
const CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const anyFields = {
  openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
};

type Crd = { status?: { conditions?: { type: string; status: string }[] } };
const isEstablished = (c: Crd) =>
  c.status?.conditions?.some(x => x.type === "Established" && x.status === "True") ?? false;

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

  async function createCm(ns: string, name: string, data: Record<string, string>) {
    await admin.json(`/api/v1/namespaces/${ns}/configmaps`, {
      method: "POST",
      body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name }, data },
    });
  }
  async function patchCm(ns: string, name: string, data: Record<string, string>) {
    await admin.json(`/api/v1/namespaces/${ns}/configmaps/${name}`, {
      method: "PATCH",
      contentType: "application/merge-patch+json",
      body: { data },
    });
  }
  function recorder(path: string, over: Partial<RecorderConfig> = {}, deps = {}): Recorder {
    return new Recorder(
      {
        journalPath: path,
        kubeconfig: api.kubeconfigs.admin,
        selection: { resources: ["configmaps"], namespaces: [], selector: "" },
        engine: fastEngine,
        mirrorEveryMs: 60_000,
        journalRetryMs: 0,
        ...over,
      },
      deps,
    );
  }
  async function createCrd(group: string, versions: { name: string; storage: boolean }[]) {
    await admin.json(CRDS, {
      method: "POST",
      body: {
        metadata: { name: `gadgets.${group}` },
        spec: {
          group,
          scope: "Namespaced",
          names: { plural: "gadgets", singular: "gadget", kind: "Gadget" },
          versions: versions.map(v => ({ ...v, served: true, schema: anyFields })),
        },
      },
    });
    for (let i = 0; i < 150; i++) {
      const c = await admin.json<Crd>(`${CRDS}/gadgets.${group}`);
      if (isEstablished(c)) return c;
      await sleep(200);
    }
    throw new Error("CRD never established");
  }

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

  it("a stream that stops says so: after the recorder stops, snapshot calls it missing and object-at stale", async () => {
    const ns = `cov-stop-${suffix()}`;
    await ensureNamespace(admin, ns);
    await createCm(ns, "one", { a: "1" });
    const tmp = tempJournalPath("krply-cov-stop-");
    try {
      const rec = recorder(tmp.path, {
        selection: { resources: ["configmaps"], namespaces: [ns], selector: "" },
      });
      await rec.start();
      const id = rec.status()[0].streamId;
      await until("watching", () => rec.status()[0]?.phase === "watching");
      await rec.stop();
      await sleep(20);
      const j = openJournal(tmp.path);
      try {
        const at = new Date().toISOString();
        const snap = snapshot(j, clusterId, at, "after-stop");
        expect(snap.data.complete).toBe(false);
        expect(snap.data.missing).toEqual([id]);
        expect(snap.coverage.unrecorded).toEqual([
          { streamId: id, state: "stopped", reason: "recorder stopped" },
        ]);
        const one = objectAt(
          j,
          clusterId,
          { kind: "ConfigMap", namespace: ns, name: "one" },
          { time: at },
        );
        expect(one.data.exists).toBe(true);
        expect(one.coverage.complete).toBe(false);
        expect(one.warnings.join("\n")).toMatch(/stopped: recorder stopped.*stale/);
      } finally {
        j.close();
      }
      // Started again, the stream says so, and an answer after the resume is complete again.
      const again = recorder(tmp.path, {
        selection: { resources: ["configmaps"], namespaces: [ns], selector: "" },
      });
      await again.start();
      try {
        await until("watching again", () => again.status()[0]?.phase === "watching");
        await sleep(20);
        const now = snapshot(again.openJournal!, clusterId, new Date().toISOString(), "resumed");
        expect(now.data.missing).toEqual([]);
        expect(now.coverage.unrecorded).toEqual([]);
      } finally {
        await again.stop();
      }
    } finally {
      tmp.cleanup();
    }
  });

  it("a stream that stops says so: a start with another selection marks the old stream stopped", async () => {
    const ns = `cov-sel-${suffix()}`;
    await ensureNamespace(admin, ns);
    const tmp = tempJournalPath("krply-cov-sel-");
    const key = cmKey(clusterId, ns);
    const id = streamIdOf(key);
    const r = await rig(api.kubeconfigs.recorder, fastEngine, tmp.path);
    r.supervisor.add(cmSpec(key));
    await until("watching", () => r.supervisor.status()[0]?.phase === "watching");
    // The process dies: nothing says the stream stopped.
    await r.supervisor.stop(null);
    await r.client.close();
    r.journal.close();
    const rec2 = recorder(tmp.path, {
      selection: { resources: ["configmaps"], namespaces: [`${ns}-b`], selector: "" },
    });
    try {
      await rec2.start();
      const j2 = rec2.openJournal!;
      const last = allRecords(j2, id).at(-1)!;
      expect(last.coverage).toMatchObject({ state: "stopped" });
      expect(last.coverage!.reason).toMatch(/selection changed/);
      const snap = snapshot(j2, clusterId, new Date().toISOString(), "after-selection-change");
      expect(snap.data.missing).toContain(id);
    } finally {
      await rec2.stop();
      tmp.cleanup();
    }
  });

  it("recorder downtime: a time inside the down window warns that changes were observed late", async () => {
    const ns = `cov-down-${suffix()}`;
    await ensureNamespace(admin, ns);
    await createCm(ns, "one", { a: "1" });
    const tmp = tempJournalPath("krply-cov-down-");
    const key = cmKey(clusterId, ns);
    const id = streamIdOf(key);
    let r = await rig(api.kubeconfigs.recorder, fastEngine, tmp.path);
    r.supervisor.add(cmSpec(key));
    await until("watching", () => r.supervisor.status()[0]?.phase === "watching");
    await r.close(true);
    // Down: a write the recorder can only observe after it restarts.
    await sleep(300);
    await patchCm(ns, "one", { a: "2" });
    const wroteAt = Date.now();
    await sleep(300);
    r = await rig(api.kubeconfigs.recorder, fastEngine, tmp.path);
    rigs.push(r);
    r.supervisor.add(cmSpec(key));
    await until("the late change", () =>
      allRecords(r.journal, id).some(x => x.type === "event" && x.resource?.name === "one"),
    );
    const late = allRecords(r.journal, id).find(x => x.type === "event")!;
    // The change is stamped when it was observed, after the write.
    expect(Date.parse(late.observedAt)).toBeGreaterThan(wroteAt);
    const inside = new Date(wroteAt + 100).toISOString();
    const a = objectAt(
      r.journal,
      clusterId,
      { kind: "ConfigMap", namespace: ns, name: "one" },
      { time: inside },
    );
    expect(a.coverage.complete).toBe(false);
    expect(a.coverage.downWindows).toHaveLength(1);
    expect(a.coverage.downWindows[0].streamId).toBe(id);
    expect(Date.parse(a.coverage.downWindows[0].from)).toBeLessThan(wroteAt);
    expect(Date.parse(a.coverage.downWindows[0].to)).toBeGreaterThan(wroteAt);
    expect(a.warnings.filter(w => w.includes(OBSERVED_LATE))).toHaveLength(1);
    const snap = snapshot(r.journal, clusterId, inside, "inside-down");
    expect(snap.coverage.downWindows.map(w => w.streamId)).toContain(id);
    expect(snap.data.missing).toContain(id);
    expect(snap.warnings.some(w => w.includes(OBSERVED_LATE))).toBe(true);
    // After the resume and the late event, the answer is complete again.
    const after = objectAt(
      r.journal,
      clusterId,
      { kind: "ConfigMap", namespace: ns, name: "one" },
      {
        time: new Date(Date.parse(late.observedAt) + 10).toISOString(),
      },
    );
    expect(after.coverage.downWindows).toEqual([]);
    expect((after.data.object?.object as { data: { a: string } }).data.a).toBe("2");
  });

  it("CRD versions: one stream at the preferred version, not a second one at the storage version", async () => {
    const group = `v${suffix()}.krply.test`;
    // v1 stores, v2 is served too; discovery prefers v2.
    const crd = await createCrd(group, [
      { name: "v1", storage: true },
      { name: "v2", storage: false },
    ]);
    const tmp = tempJournalPath("krply-cov-crdv-");
    const rec = recorder(tmp.path, {
      selection: { resources: [`*.${group}`], namespaces: [], selector: "" },
    });
    try {
      // Discovery at boot may not list the new group yet; the reconcile below covers both paths.
      await rec.start();
      await rec.onCrd(crd, "ADDED");
      await until("one stream watching", () => rec.status()[0]?.phase === "watching", 30_000);
      expect(rec.status().map(s => s.key.version)).toEqual(["v2"]);
      await admin.json(`/apis/${group}/v1/namespaces/default/gadgets`, {
        method: "POST",
        body: {
          apiVersion: `${group}/v1`,
          kind: "Gadget",
          metadata: { name: "g1" },
          spec: { a: 1 },
        },
      });
      const j = rec.openJournal!;
      await until("the event", () =>
        allRecords(j).some(x => x.type === "event" && x.resource?.name === "g1"),
      );
      await sleep(500);
      expect(
        allRecords(j).filter(x => x.type === "event" && x.resource?.name === "g1"),
      ).toHaveLength(1);

      // The CRD stops serving v2: its stream stops with the reason, and v1 is recorded instead.
      const cur = await admin.json<{ spec: { versions: { name: string; served: boolean }[] } }>(
        `${CRDS}/gadgets.${group}`,
      );
      cur.spec.versions = cur.spec.versions.map(v =>
        v.name === "v2" ? { ...v, served: false } : v,
      );
      const updated = await admin.json<Crd>(`${CRDS}/gadgets.${group}`, {
        method: "PUT",
        body: cur,
      });
      const v2Id = rec.status()[0].streamId;
      await rec.onCrd(updated, "MODIFIED");
      expect(rec.status().map(s => s.key.version)).toEqual(["v1"]);
      const stop = allRecords(j, v2Id)
        .filter(x => x.type === "coverage_change")
        .at(-1)!;
      expect(stop.coverage).toMatchObject({ state: "stopped" });
      expect(stop.coverage!.reason).toMatch(/now serves v1/);
    } finally {
      await rec.stop();
      await admin.json(`${CRDS}/gadgets.${group}`, { method: "DELETE" }).catch(() => undefined);
      tmp.cleanup();
    }
  });

  it("krply record follows CRDs created and deleted after it starts", async () => {
    // The built `krply record` itself, so the test follows whatever the command builds, not a
    // Recorder configured here.
    const group = `f${suffix()}.krply.test`;
    const tmp = tempJournalPath("krply-cov-follow-");
    const tools = buildTools();
    const cli = startKrply(tools, [
      "--store",
      tmp.path,
      "record",
      "--kubeconfig",
      api.kubeconfigs.admin,
      "-r",
      `*.${group}`,
    ]);
    try {
      await cli.recording();
      // Another process writes the journal: each probe opens a fresh view of what it committed.
      const records = (): JournalRecord[] => {
        const view = openJournalView(tmp.path);
        try {
          // A stream the writer registers while the view reads is found, not called damage
          // (Registry.streamOf re-reads the registry once).
          return allRecords(view);
        } finally {
          view.close();
        }
      };
      expect(records().filter(x => parseStreamId(x.streamId).group === group)).toEqual([]);
      await createCrd(group, [{ name: "v1", storage: true }]);
      await until(
        "the CRD's stream listed",
        () =>
          records().some(x => parseStreamId(x.streamId).group === group && x.type === "baseline"),
        30_000,
        200,
      );
      await admin.json(`/apis/${group}/v1/namespaces/default/gadgets`, {
        method: "POST",
        body: { apiVersion: `${group}/v1`, kind: "Gadget", metadata: { name: "g1" } },
      });
      const id = await until(
        "the event",
        () =>
          records().find(
            x => parseStreamId(x.streamId).group === group && x.resource?.name === "g1",
          )?.streamId,
        30_000,
        200,
      );
      await admin.json(`${CRDS}/gadgets.${group}`, { method: "DELETE" });
      await until(
        "the stream stopped",
        () => records().some(x => x.streamId === id && x.coverage?.state === "stopped"),
        30_000,
        200,
      );
      const last = records()
        .filter(x => x.streamId === id)
        .at(-1)!;
      expect(last.coverage).toMatchObject({ state: "stopped" });
      expect(last.coverage!.reason).toMatch(/deleted/);
      expect(await cli.stop()).toBe(0);
    } finally {
      await cli.stop();
      tools.cleanup();
      tmp.cleanup();
    }
  });

  it("a lost journal is detected through the Store mirror (a real PeprStore CR)", async () => {
    const ns = `cov-lost-${suffix()}`;
    await ensureNamespace(admin, ns);
    await createCm(ns, "one", { a: "1" });
    await ensurePeprStore();
    const storeName = `pepr-${suffix()}-store`;
    const storePath = `/apis/pepr.dev/v1/namespaces/pepr-system/peprstores/${storeName}`;
    await admin.json("/apis/pepr.dev/v1/namespaces/pepr-system/peprstores", {
      method: "POST",
      body: {
        apiVersion: "pepr.dev/v1",
        kind: "PeprStore",
        metadata: { name: storeName },
        data: {},
      },
    });
    // Pepr keeps capability "recorder", key "checkpoints" under this data key.
    const KEY = "recorder-v2-checkpoints";
    const write = (value: string) =>
      admin.json(storePath, {
        method: "PATCH",
        contentType: "application/merge-patch+json",
        body: { data: { [KEY]: value } },
      });
    const read = async () =>
      (await admin.json<{ data?: Record<string, string> }>(storePath)).data?.[KEY];
    const selection = { resources: ["configmaps"], namespaces: [ns], selector: "" };

    const first = tempJournalPath("krply-cov-lost-a-");
    const rec = recorder(
      first.path,
      { selection, mirrorEveryMs: 100 },
      { mirror: write, readMirror: read },
    );
    await rec.start();
    const id = rec.status()[0].streamId;
    await until("watching", () => rec.status()[0]?.phase === "watching");
    await patchCm(ns, "one", { a: "2" });
    const wanted = await until("the change durable", () => rec.status()[0].durableRv ?? undefined);
    await until("mirrored", () => rec.status()[0].durableRv !== null && rec.status()[0].events > 0);
    await rec.stop(); // the last mirror tick is written on stop
    expect(JSON.parse((await read())!).watermarks[id]).toBeDefined();
    expect(wanted).toBeDefined();
    first.cleanup();

    // The volume is recreated empty: the journal must not start as if nothing came before.
    const second = tempJournalPath("krply-cov-lost-b-");
    const rec2 = recorder(second.path, { selection }, { readMirror: read });
    try {
      await rec2.start();
      const j = rec2.openJournal!;
      const recs = allRecords(j, id);
      expect(recs[0].type).toBe("gap");
      expect(recs[0].gap!.reason).toMatch(/journal lost or replaced/);
      await until("relisted", () => j.streams().find(s => s.streamId === id)?.openGaps === 0);
    } finally {
      await rec2.stop();
      second.cleanup();
      await admin.json(storePath, { method: "DELETE" }).catch(() => undefined);
    }
  });

  async function ensurePeprStore(): Promise<void> {
    try {
      await admin.json(CRDS, {
        method: "POST",
        body: crdOf(
          "pepr.dev",
          { plural: "peprstores", singular: "peprstore", kind: "PeprStore" },
          { data: { type: "object", additionalProperties: { type: "string" } } },
        ),
      });
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 409)) throw err;
    }
    await ensureNamespace(admin, "pepr-system");
    for (let i = 0; i < 150; i++) {
      if (isEstablished(await admin.json<Crd>(`${CRDS}/peprstores.pepr.dev`))) return;
      await sleep(200);
    }
  }
});
