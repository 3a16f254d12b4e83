// The web UI benchmark's journal: `events` records over 300 streams (3 resources x 100 namespaces),
// with one Deployment edited `hotVersions` times throughout, a few gaps (each closed by a relist)
// and recorder down windows. Every choice comes from a seeded PRNG, so each build is identical.
import {
  baselineRecords,
  coverageRecord,
  eventRecord,
  gapRecord,
  type JournalRecord,
  type KubeObject,
  type StreamKey,
} from "../src/event";
import { openJournal, type CheckpointAdvance } from "../src/journal";
import { configMap, deployment } from "../test/support/journal-fixtures";
import { rng } from "./lib-kube-workload";

export const UI_BENCH_CLUSTER = "bench-ui";
export const UI_T0 = Date.UTC(2026, 0, 1);
/** Milliseconds between two records: 1M records span about 14 hours. */
const STEP_MS = 50;
const RESOURCES = [
  { resource: "configmaps", group: "", kind: "ConfigMap" },
  { resource: "deployments", group: "apps", kind: "Deployment" },
  { resource: "services", group: "", kind: "Service" },
] as const;

export interface UiBenchShape {
  events: number;
  namespaces: number;
  objectsPerStream: number;
  hotVersions: number;
  gaps: number;
  downWindows: number;
  seed: number;
}

export const UI_BENCH_SHAPE: UiBenchShape = {
  events: 1_000_000,
  namespaces: 100,
  objectsPerStream: 20,
  hotVersions: 5000,
  gaps: 12,
  downWindows: 8,
  seed: 17,
};

/** The object the timeline benchmark opens. */
export const HOT = { kind: "Deployment", namespace: "ns-000", name: "checkout" };

interface Stream {
  key: StreamKey;
  kind: (typeof RESOURCES)[number]["kind"];
  ns: string;
}

function streamsOf(shape: UiBenchShape): Stream[] {
  const out: Stream[] = [];
  for (let n = 0; n < shape.namespaces; n++) {
    const ns = `ns-${String(n).padStart(3, "0")}`;
    for (const r of RESOURCES)
      out.push({
        key: {
          clusterId: UI_BENCH_CLUSTER,
          group: r.group,
          version: "v1",
          resource: r.resource,
          namespace: ns,
          selector: "",
        },
        kind: r.kind,
        ns,
      });
  }
  return out;
}

function service(name: string, ns: string, rv: number, edit: number): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: {
      name,
      namespace: ns,
      uid: `svc-${ns}-${name}`,
      resourceVersion: String(rv),
      labels: { app: name, rev: String(edit % 5) },
    },
    spec: {
      selector: { app: name },
      ports: [{ name: "http", port: 80, targetPort: 8080 + (edit % 3) }],
      type: "ClusterIP",
    },
  };
}

/** Object `i` of a stream at resourceVersion `rv` after `edit` edits. */
function objectOf(s: Stream, i: number, rv: number, edit: number): KubeObject {
  const name = s.kind === "Deployment" && s.ns === HOT.namespace && i === 0 ? HOT.name : `app-${i}`;
  if (s.kind === "ConfigMap")
    return configMap(name, s.ns, `cm-${s.ns}-${i}`, rv, {
      revision: String(edit),
      mode: edit % 2 ? "b" : "a",
    });
  if (s.kind === "Service") return service(name, s.ns, rv, edit);
  const d = deployment(name, s.ns, `dep-${s.ns}-${i}`, rv, edit % 4);
  const spec = d.spec as {
    replicas: number;
    template: { spec: { containers: { image: string }[] } };
  };
  spec.replicas = 2 + (edit % 3);
  spec.template.spec.containers[0].image = `registry.example.com/shop/${name}:1.${Math.floor(edit / 10)}.0`;
  return d;
}

/** One checkpoint per stream of a batch, at its last object record: what a recorder advances. */
function checkpointsOf(recs: readonly JournalRecord[]): CheckpointAdvance[] {
  const last = new Map<string, JournalRecord>();
  for (const r of recs) if (r.resource) last.set(r.streamId, r);
  return [...last.values()].map(r => ({
    streamId: r.streamId,
    resourceVersion: r.resource!.resourceVersion,
    observedAt: r.observedAt,
  }));
}

/** Writes the journal; returns the observation time of the last record. */
export function buildUiBenchJournal(path: string, shape: UiBenchShape = UI_BENCH_SHAPE): string {
  const rand = rng(shape.seed);
  const streams = streamsOf(shape);
  const hotStream = streams.findIndex(s => s.kind === "Deployment" && s.ns === HOT.namespace);
  const journal = openJournal(path, { sync: "NORMAL" });
  let rv = 1;
  let seq = 0;
  const time = () => new Date(UI_T0 + seq * STEP_MS).toISOString();
  const edits = streams.map(() => new Array<number>(shape.objectsPerStream).fill(0));
  const baselineOf = (si: number): JournalRecord[] => {
    const s = streams[si];
    const objects = edits[si].map((e, i) => objectOf(s, i, rv++, e));
    return baselineRecords({
      stream: s.key,
      listResourceVersion: String(rv++),
      listedAt: time(),
      objects,
      kind: s.kind,
    });
  };
  let batch: JournalRecord[] = [];
  let first = true;
  const flush = () => {
    const keys = first ? streams.map(s => s.key) : undefined;
    journal.append({ records: batch, checkpoints: checkpointsOf(batch), streams: keys });
    batch = [];
    first = false;
  };
  for (let si = 0; si < streams.length; si++) batch.push(...baselineOf(si));
  seq++;
  // When the faults happen: event indices drawn once, up front.
  const at = (n: number) =>
    Array.from({ length: n }, () => Math.floor(shape.events * (0.1 + 0.8 * rand())));
  const gapAt = new Map(at(shape.gaps).map(e => [e, Math.floor(rand() * streams.length)]));
  // The hot object's stream has a gap too, in the middle of its history.
  gapAt.set(Math.floor(shape.events / 2), hotStream);
  const downAt = new Map(at(shape.downWindows).map(e => [e, Math.floor(rand() * streams.length)]));
  // The hot object gets an edit whenever its share of the records so far falls behind.
  let hotEdits = 0;
  for (let e = batch.length; e < shape.events; e++, seq++) {
    const g = gapAt.get(e);
    const d = downAt.get(e);
    if (g !== undefined) {
      const s = streams[g];
      batch.push(
        gapRecord({
          stream: s.key,
          lastGoodResourceVersion: String(rv - 1),
          reason: "410 Gone: the resourceVersion for the provided watch is too old",
          detectedAt: time(),
        }),
      );
      seq += 200; // the relist comes ten seconds later
      batch.push(...baselineOf(g));
      e += edits[g].length + 1;
    } else if (d !== undefined) {
      const s = streams[d];
      batch.push(
        coverageRecord({
          stream: s.key,
          state: "available",
          reason: "resumed after the recorder was down",
          observedAt: time(),
          downSince: new Date(UI_T0 + (seq - 1200) * STEP_MS).toISOString(),
        }),
      );
    } else {
      const hot = hotEdits < ((e + 1) * (shape.hotVersions - 1)) / shape.events;
      if (hot) hotEdits++;
      const si = hot ? hotStream : Math.floor(rand() * streams.length);
      const i = hot ? 0 : 1 + Math.floor(rand() * (shape.objectsPerStream - 1));
      edits[si][i]++;
      batch.push(
        eventRecord({
          stream: streams[si].key,
          watchType: "MODIFIED",
          object: objectOf(streams[si], i, rv++, edits[si][i]),
          observedAt: time(),
        }),
      );
    }
    if (batch.length >= 2000) flush();
  }
  if (batch.length > 0) flush();
  journal.close();
  return time();
}
