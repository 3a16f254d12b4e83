// Deterministic synthetic Kubernetes churn for benchmarks: Deployments with status churn,
// ConfigMap edits and Pod phase changes, generated batch by batch so memory stays flat.
import { eventRecord, type JournalRecord, type KubeObject, type StreamKey } from "../src/event";
import { deployment } from "../test/support/journal-fixtures";

/** A small seeded PRNG (mulberry32), so raw and journal runs see identical input. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const stream = (resource: string, group: string): StreamKey => ({
  clusterId: "bench",
  group,
  version: "v1",
  resource,
  namespace: "",
  selector: "",
});
export const STREAMS = {
  deployments: stream("deployments", "apps"),
  configmaps: stream("configmaps", ""),
  pods: stream("pods", ""),
};

interface State {
  kind: "Deployment" | "ConfigMap" | "Pod";
  name: string;
  ns: string;
  uid: number;
  n: number; // edits so far
  alive: boolean;
}

function configMapObj(s: State, rv: number): KubeObject {
  const data: Record<string, string> = {
    "app.properties": `server.port=8080\nfeature.flags=a,b,c\nrevision=${Math.floor(s.n / 3)}\n`,
    "log.level": s.n % 2 ? "debug" : "info",
  };
  for (let i = 0; i < s.n % 5; i++) data[`extra-${i}`] = `value-${i}-${s.n}`;
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: s.name,
      namespace: s.ns,
      uid: `cm-${s.uid}`,
      resourceVersion: String(rv),
      creationTimestamp: "2024-01-01T00:00:00Z",
      labels: { app: s.name },
    },
    data,
  };
}

const PHASES = ["Pending", "Pending", "Running", "Running", "Running", "Succeeded"];
function podObj(s: State, rv: number): KubeObject {
  const phase = PHASES[Math.min(s.n, PHASES.length - 1)];
  const running = phase === "Running";
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: s.name,
      namespace: s.ns,
      uid: `pod-${s.ns}-${s.name}-${s.uid}`,
      resourceVersion: String(rv),
      creationTimestamp: "2024-01-01T00:00:00Z",
      labels: { app: s.name.replace(/-\w+$/, ""), "pod-template-hash": "7d9f8c6b5" },
      ownerReferences: [
        {
          apiVersion: "apps/v1",
          kind: "ReplicaSet",
          name: `${s.name}-rs`,
          uid: "rs-uid",
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      containers: [
        {
          name: "app",
          image: "registry.example.com/shop/app:1.4.2",
          resources: { requests: { cpu: "100m", memory: "128Mi" } },
        },
      ],
      nodeName: `node-${s.uid % 7}`,
      restartPolicy: "Always",
      serviceAccountName: "default",
    },
    status: {
      phase,
      conditions: [
        {
          type: "Ready",
          status: running ? "True" : "False",
          lastTransitionTime: `2024-01-01T00:0${s.n % 10}:00Z`,
        },
        { type: "PodScheduled", status: "True", lastTransitionTime: "2024-01-01T00:00:00Z" },
      ],
      podIP: running ? `10.0.${s.uid % 250}.${s.n % 250}` : undefined,
      containerStatuses: [
        {
          name: "app",
          ready: running,
          restartCount: Math.floor(s.n / 4),
          started: running,
          image: "registry.example.com/shop/app:1.4.2",
        },
      ],
    },
  } as KubeObject;
}

/** Generates events over a fixed population; 30% of events hit 5% of objects, like real churn. */
export class Workload {
  private readonly states: State[] = [];
  private readonly rand: () => number;
  private rv = 1000;
  private t = Date.UTC(2024, 0, 1);

  constructor(objects: number, seed = 42) {
    this.rand = rng(seed);
    for (let i = 0; i < objects; i++) {
      const r = i % 10;
      const kind = r < 5 ? "Deployment" : r < 7 ? "ConfigMap" : "Pod";
      this.states.push({
        kind,
        name: `${kind.toLowerCase()}-${i}`,
        ns: `ns-${i % 40}`,
        uid: i,
        n: 0,
        alive: false,
      });
    }
  }

  /** The next n events as journal records. */
  next(n: number): JournalRecord[] {
    const out: JournalRecord[] = [];
    for (let i = 0; i < n; i++) {
      const hot = this.rand() < 0.3;
      const span = hot ? Math.max(1, Math.floor(this.states.length * 0.05)) : this.states.length;
      const s = this.states[Math.floor(this.rand() * span)];
      const rv = ++this.rv;
      this.t += 5;
      let type: "ADDED" | "MODIFIED" | "DELETED" = s.alive ? "MODIFIED" : "ADDED";
      if (s.kind === "Pod" && s.alive && s.n >= PHASES.length && this.rand() < 0.5)
        type = "DELETED";
      let obj: KubeObject;
      if (s.kind === "Deployment") {
        obj = deployment(s.name, s.ns, `dep-${s.uid}`, rv, s.n % 4);
        if (s.n % 20 === 19) (obj.spec as { replicas: number }).replicas = 4; // an occasional spec edit
      } else if (s.kind === "ConfigMap") obj = configMapObj(s, rv);
      else obj = podObj(s, rv);
      const streamKey =
        s.kind === "Deployment"
          ? STREAMS.deployments
          : s.kind === "ConfigMap"
            ? STREAMS.configmaps
            : STREAMS.pods;
      out.push(
        eventRecord({
          stream: streamKey,
          watchType: type,
          object: JSON.parse(JSON.stringify(obj)) as KubeObject,
          observedAt: new Date(this.t).toISOString(),
        }),
      );
      if (type === "DELETED") {
        s.alive = false;
        s.n = 0;
        s.uid += 100_000; // re-created later under a new uid
      } else {
        s.alive = true;
        s.n++;
      }
    }
    return out;
  }

  /** Names and time span, for sampling reads. */
  sample(): { kind: string; ns: string; name: string } {
    const s = this.states[Math.floor(this.rand() * this.states.length)];
    return { kind: s.kind, ns: s.ns, name: s.name };
  }

  get now(): number {
    return this.t;
  }
}
