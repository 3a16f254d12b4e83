import {
  baselineRecords,
  eventRecord,
  gapRecord,
  streamIdOf,
  type KubeObject,
  type StreamKey,
} from "../event";
import { openJournal, type Journal } from "../journal";
import { at, tempJournalPath } from "../../test/support/journal-fixtures";
import { diff } from "./diff";
import { objectAt } from "./object-at";
import { search } from "./search";
import {
  expiredSnapshots,
  listSnapshots,
  recordSnapshot,
  snapshot,
  snapshotObjects,
} from "./snapshot";
import { timeline } from "./timeline";

const deploys: StreamKey = {
  clusterId: "c1",
  group: "apps",
  version: "v1",
  resource: "deployments",
  namespace: "",
  selector: "",
};
const cms: StreamKey = { ...deploys, group: "", resource: "configmaps", namespace: "shop" };

const mf = (manager: string, time: string, fields: Record<string, unknown>) => ({
  manager,
  operation: "Update",
  apiVersion: "apps/v1",
  time,
  fieldsType: "FieldsV1",
  fieldsV1: fields,
});

function web(rv: number, replicas: number, ready: number, editedAt?: string): KubeObject {
  const managed = [
    mf("kubectl-client-side-apply", "2024-01-01T00:00:00Z", {
      "f:spec": { "f:template": { "f:spec": { "f:containers": {} } } },
    }),
  ];
  if (editedAt) managed.push(mf("kubectl-edit", editedAt, { "f:spec": { "f:replicas": {} } }));
  managed.push({
    ...mf("kube-controller-manager", at(rv), { "f:status": { "f:readyReplicas": {} } }),
    subresource: "status",
  } as never);
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: {
      name: "web",
      namespace: "shop",
      uid: "u-web",
      resourceVersion: String(rv),
      generation: replicas,
      creationTimestamp: "2024-01-01T00:00:00Z",
      managedFields: managed,
    },
    spec: { replicas, template: { spec: { containers: [{ name: "web", image: "web:1" }] } } },
    status: { readyReplicas: ready },
  };
}

function cm(name: string, rv: number, data: Record<string, string>): KubeObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace: "shop", uid: `u-${name}`, resourceVersion: String(rv) },
    data,
  };
}

describe("materializer over a real journal", () => {
  let tmp: ReturnType<typeof tempJournalPath>;
  let j: Journal;
  const append = (records: ReturnType<typeof eventRecord>[]) =>
    j.append({ records, checkpoints: [], streams: [deploys, cms] });

  beforeEach(() => {
    tmp = tempJournalPath("krply-mat-");
    j = openJournal(tmp.path, { keyframeEvery: 3 });
    append([
      ...baselineRecords({
        stream: deploys,
        listResourceVersion: "10",
        listedAt: at(10),
        objects: [web(10, 3, 3)],
        kind: "Deployment",
      }),
      ...baselineRecords({
        stream: cms,
        listResourceVersion: "11",
        listedAt: at(10),
        objects: [cm("cfg", 11, { a: "1" })],
        kind: "ConfigMap",
      }),
    ]);
    const ev = (s: StreamKey, w: "ADDED" | "MODIFIED" | "DELETED", o: KubeObject, t: number) =>
      eventRecord({ stream: s, watchType: w, object: o, observedAt: at(t) });
    append([ev(deploys, "MODIFIED", web(20, 5, 3, "2024-01-01T02:14:07Z"), 20)]);
    append([ev(deploys, "MODIFIED", web(30, 5, 5, "2024-01-01T02:14:07Z"), 30)]);
    append([ev(cms, "ADDED", cm("new", 40, {}), 40)]);
    append([ev(cms, "DELETED", cm("cfg", 50, { a: "1" }), 50)]);
  });
  afterEach(() => {
    j.close();
    tmp.cleanup();
  });

  it("diff reports exactly the scripted edits and nothing from server noise", () => {
    const d = diff(j, "c1", at(15), at(55), { namespace: "shop" });
    expect(d.hasGaps).toBe(false);
    expect(d.warnings).toEqual([]);
    const byName = Object.fromEntries(d.objects.map(o => [o.name, o]));
    expect(Object.keys(byName).sort()).toEqual(["cfg", "new", "web"]);
    expect(byName.new.change).toBe("added");
    expect(byName.cfg.change).toBe("removed");
    expect(byName.web.changes.map(c => [c.path, c.before, c.after])).toEqual([
      ["spec.replicas", 3, 5],
    ]);
    expect(byName.web.changes[0].managers[0]).toMatchObject({
      manager: "kubectl-edit",
      operation: "Update",
      time: "2024-01-01T02:14:07Z",
    });
  });

  it("diff shows status changes only when asked", () => {
    const quiet = diff(j, "c1", at(25), at(35));
    expect(quiet.objects).toEqual([]);
    const loud = diff(j, "c1", at(25), at(35), { includeStatus: true });
    expect(loud.objects[0].changes.map(c => c.path)).toEqual(["status.readyReplicas"]);
    expect(loud.objects[0].changes[0].managers[0]).toMatchObject({
      manager: "kube-controller-manager",
      subresource: "status",
    });
  });

  it("objectAt answers by time and by resourceVersion with provenance", () => {
    const byTime = objectAt(
      j,
      "c1",
      { kind: "Deployment", namespace: "shop", name: "web" },
      {
        time: at(25),
      },
    );
    expect(byTime.exists).toBe(true);
    expect(byTime.object?.provenance).toMatchObject({
      resourceVersion: "20",
      watchType: "MODIFIED",
    });
    const byRv = objectAt(
      j,
      "c1",
      { streamId: streamIdOf(deploys), namespace: "shop", name: "web" },
      { resourceVersion: "10" },
    );
    expect(byRv.object?.provenance).toMatchObject({ recordType: "baseline", synthetic: true });
    const gone = objectAt(
      j,
      "c1",
      { kind: "ConfigMap", namespace: "shop", name: "cfg" },
      {
        time: at(55),
      },
    );
    expect(gone.exists).toBe(false);
    expect(gone.warnings.join("\n")).toMatch(/deleted/);
  });

  it("a complete snapshot holds every object with per-stream watermarks and is listed", () => {
    const s = recordSnapshot(j, snapshot(j, "c1", at(55), "nightly"), new Date(at(56)));
    expect(s.complete).toBe(true);
    expect(s.missing).toEqual([]);
    expect(s.objects.map(o => o.name).sort()).toEqual(["new", "web"]);
    expect(s.watermarks).toEqual({ [streamIdOf(deploys)]: "30", [streamIdOf(cms)]: "50" });
    const again = snapshotObjects(j, s.id!, { namespace: "shop" });
    expect(again.objects.map(o => o.name).sort()).toEqual(["new", "web"]);
    expect(again.warnings).toEqual([]);
    const listed = listSnapshots(j, "c1");
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ id: s.id, name: "nightly", complete: true, objectCount: 2 });
  });

  it("a forced gap makes the snapshot incomplete with Missing filled, until a relist resolves it", () => {
    j.append({
      records: [
        gapRecord({
          stream: cms,
          lastGoodResourceVersion: "50",
          reason: "410 Gone",
          detectedAt: at(60),
        }),
      ],
      checkpoints: [],
    });
    const during = snapshot(j, "c1", at(65), "during");
    expect(during.complete).toBe(false);
    expect(during.missing).toEqual([streamIdOf(cms)]);
    expect(during.warnings.join("\n")).toMatch(/gap .*410 Gone/);
    const inGap = objectAt(
      j,
      "c1",
      { kind: "ConfigMap", namespace: "shop", name: "new" },
      {
        time: at(65),
      },
    );
    expect(inGap.inGap).toBe(true);
    expect(inGap.warnings.length).toBeGreaterThan(0);

    append(
      baselineRecords({
        stream: cms,
        listResourceVersion: "70",
        listedAt: at(70),
        objects: [cm("late", 69, {})],
        kind: "ConfigMap",
      }),
    );
    const after = snapshot(j, "c1", at(75), "after");
    expect(after.complete).toBe(true);
    expect(after.objects.map(o => o.name).sort()).toEqual(["late", "web"]);
    const d = diff(j, "c1", at(55), at(75), { namespace: "shop" });
    expect(d.hasGaps).toBe(true);
    expect(d.objects.map(o => [o.name, o.change])).toEqual([
      ["late", "added"],
      ["new", "removed"],
    ]);
  });

  it("a stream without a baseline is missing from the snapshot", () => {
    const s = snapshot(j, "c1", at(5), "early");
    expect(s.complete).toBe(false);
    expect(s.missing.sort()).toEqual([streamIdOf(cms), streamIdOf(deploys)].sort());
    expect(s.objects).toEqual([]);
  });

  it("search finds when and where an object existed", () => {
    const { hits } = search(j, { namePrefix: "cf" });
    expect(hits).toHaveLength(1);
    expect(hits[0]).toMatchObject({ kind: "ConfigMap", namespace: "shop", name: "cfg" });
    expect(hits[0].ranges).toEqual([
      {
        from: at(10),
        to: at(50),
        uid: "u-cfg",
        createdAt: null,
        start: "first-seen",
        end: "deleted",
        uncertain: false,
      },
    ]);
    expect(search(j, { namePrefix: "w", labelSelector: "app=x" }).hits).toEqual([]);
  });

  it("timeline lists each version with its changed fields and manager", () => {
    const t = timeline(j, "c1", { kind: "Deployment", namespace: "shop", name: "web" });
    expect(t.entries.map(e => [e.resourceVersion, e.changes.map(c => c.path), e.note])).toEqual([
      ["10", [], "first seen in a list"],
      ["20", ["spec.replicas"], null],
      ["30", [], "no spec/metadata change"],
    ]);
    expect(t.entries[1].manager).toBe("kubectl-edit (Update 2024-01-01T02:14:07Z)");
  });

  it("keeps only the newest snapshots when asked which expired", () => {
    for (const n of [1, 2, 3])
      recordSnapshot(j, snapshot(j, "c1", at(55), `s${n}`), new Date(at(100 + n)));
    expect(expiredSnapshots(listSnapshots(j), 2).map(s => s.name)).toEqual(["s1"]);
  });
  it("says so when the point is before pruned history", () => {
    j.close();
    j = openJournal(tmp.path, { retention: { maxAgeMs: 25_000 } });
    expect(j.prune(new Date(at(60)))).not.toBeNull();
    const old = objectAt(
      j,
      "c1",
      { kind: "Deployment", namespace: "shop", name: "web" },
      {
        time: at(15),
      },
    );
    expect(old.prunedBefore).not.toBeNull();
    expect(old.warnings.join("\n")).toMatch(/pruned/);
    const s = snapshot(j, "c1", at(15), "old");
    expect(s.complete).toBe(false);
    expect(s.warnings.join("\n")).toMatch(/pruned; objects at .* cannot be rebuilt/);
    expect(diff(j, "c1", at(15), at(55)).hasGaps).toBe(true);
  });
});
