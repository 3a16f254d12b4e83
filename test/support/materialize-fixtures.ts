// The scripted history the materializer's tests share: a baseline of a Deployment and a
// ConfigMap, a kubectl edit of replicas, a status-only change, a new ConfigMap and a delete.
import {
  baselineRecords,
  eventRecord,
  gapRecord,
  type JournalRecord,
  type KubeObject,
  type StreamKey,
} from "../../src/event";
import { openJournal, type Journal } from "../../src/journal";
import { at, tempJournalPath } from "./journal-fixtures";

export const deploys: StreamKey = {
  clusterId: "c1",
  group: "apps",
  version: "v1",
  resource: "deployments",
  namespace: "",
  selector: "",
};
export const cms: StreamKey = { ...deploys, group: "", resource: "configmaps", namespace: "shop" };

const mf = (manager: string, time: string, fields: Record<string, unknown>) => ({
  manager,
  operation: "Update",
  apiVersion: "apps/v1",
  time,
  fieldsType: "FieldsV1",
  fieldsV1: fields,
});

export function web(rv: number, replicas: number, ready: number, editedAt?: string): KubeObject {
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

export function cm(name: string, rv: number, data: Record<string, string>): KubeObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace: "shop", uid: `u-${name}`, resourceVersion: String(rv) },
    data,
  };
}

/** A journal holding the scripted history, fresh for each test; `append` adds more. */
export interface ScriptedJournal {
  j: Journal;
  path: string;
  append(records: JournalRecord[]): void;
  /** The ConfigMap stream's watch expires at 60 s: a GAP after its last good RV, 50. */
  loseWatch(): void;
  /** The ConfigMap stream relists at 70 s: only "late" (RV 69) is listed, so "new" vanished. */
  relistConfigMaps(): void;
}

/** Registers beforeEach/afterEach that give every test its own scripted journal. */
export function useScriptedJournal(): ScriptedJournal {
  let tmp: ReturnType<typeof tempJournalPath>;
  const h = {
    append(records: JournalRecord[]) {
      h.j.append({ records, checkpoints: [], streams: [deploys, cms] });
    },
    loseWatch() {
      h.append([
        gapRecord({
          stream: cms,
          lastGoodResourceVersion: "50",
          reason: "410 Gone",
          detectedAt: at(60),
        }),
      ]);
    },
    relistConfigMaps() {
      h.append(
        baselineRecords({
          stream: cms,
          listResourceVersion: "70",
          listedAt: at(70),
          objects: [cm("late", 69, {})],
          kind: "ConfigMap",
        }),
      );
    },
  } as ScriptedJournal;
  beforeEach(() => {
    tmp = tempJournalPath("krply-mat-");
    h.path = tmp.path;
    h.j = openJournal(tmp.path, { keyframeEvery: 3 });
    const append = h.append;
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
    h.j.close();
    tmp.cleanup();
  });
  return h;
}
