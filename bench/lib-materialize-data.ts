// Builds a synthetic journal for the materializer benchmark: a baseline of many objects, then edits.
import {
  baselineRecords,
  eventRecord,
  type JournalRecord,
  type KubeObject,
  type StreamKey,
} from "../src/event";
import { openJournal, type Journal } from "../src/journal";

export const BENCH_CLUSTER = "bench";
export const T0 = Date.UTC(2026, 0, 1);

export function deploymentsStream(): StreamKey {
  return {
    clusterId: BENCH_CLUSTER,
    group: "apps",
    version: "v1",
    resource: "deployments",
    namespace: "",
    selector: "",
  };
}

function obj(i: number, rv: number, edit: number, perNs: number): KubeObject {
  const ns = `ns-${Math.floor(i / perNs)}`;
  const name = `app-${i}`;
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: {
      name,
      namespace: ns,
      uid: `uid-${i}`,
      resourceVersion: String(rv),
      generation: edit + 1,
      creationTimestamp: "2026-01-01T00:00:00Z",
      labels: { app: name, "app.kubernetes.io/part-of": "shop", rev: String(edit % 7) },
      managedFields: [
        {
          manager: "kubectl",
          operation: "Update",
          apiVersion: "apps/v1",
          time: new Date(T0 + rv).toISOString().replace(/\.\d+Z$/, "Z"),
          fieldsType: "FieldsV1",
          fieldsV1: {
            "f:spec": { "f:replicas": {}, "f:template": { "f:spec": { "f:containers": {} } } },
          },
        },
      ],
    },
    spec: {
      replicas: 1 + (edit % 5),
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          containers: [
            {
              name: "app",
              image: `registry.example.com/shop/${name}:1.${edit % 13}.0`,
              ports: [{ containerPort: 8080, protocol: "TCP" }],
              env: [
                { name: "LOG_LEVEL", value: edit % 2 ? "debug" : "info" },
                { name: "SHARD", value: String(i % 16) },
              ],
              resources: {
                limits: { cpu: "500m", memory: "256Mi" },
                requests: { cpu: "100m", memory: "128Mi" },
              },
            },
          ],
        },
      },
    },
    status: { observedGeneration: edit + 1, replicas: 1 + (edit % 5), readyReplicas: edit % 5 },
  };
}

export interface BenchJournal {
  journal: Journal;
  /** Observation time (ms) of each event index: T0 + index. */
  timeOf(index: number): string;
  events: number;
  objects: number;
  perNamespace: number;
}

/** Writes `events` records over `objects` Deployments (one baseline, then round-robin edits). */
export function buildJournal(
  path: string,
  events: number,
  objects: number,
  perNamespace: number,
): BenchJournal {
  const journal = openJournal(path, { sync: "NORMAL" });
  const stream = deploymentsStream();
  const timeOf = (i: number) => new Date(T0 + i).toISOString();
  const n = Math.min(objects, events);
  const base = Array.from({ length: n }, (_, i) => obj(i, i + 1, 0, perNamespace));
  journal.append({
    records: baselineRecords({
      stream,
      listResourceVersion: String(n),
      listedAt: timeOf(0),
      objects: base,
      kind: "Deployment",
    }),
    checkpoints: [{ streamId: "", resourceVersion: String(n), observedAt: timeOf(0) }].slice(0, 0),
    streams: [stream],
  });
  const edits = new Array<number>(n).fill(0);
  let batch: JournalRecord[] = [];
  // A deterministic scramble so edits hit objects in a non-sequential order.
  for (let e = n; e < events; e++) {
    const i = (e * 7919) % n;
    edits[i]++;
    const rv = e + 1;
    batch.push(
      eventRecord({
        stream,
        watchType: "MODIFIED",
        object: obj(i, rv, edits[i], perNamespace),
        observedAt: timeOf(e),
      }),
    );
    if (batch.length === 2000 || e === events - 1) {
      journal.append({ records: batch, checkpoints: [] });
      batch = [];
    }
  }
  return { journal, timeOf, events, objects: n, perNamespace };
}
