// The workload of bench/scale.ts: namespaces, a CRD and OBJECTS objects (ConfigMaps of about 1 KiB and
// custom resources), created once per harness data dir, and writers that merge-patch random objects
// (seeded) as fast as the server answers.
import type { KubeClient } from "../src/kube/client";
import { ApiError } from "../src/kube/errors";
import type { Ack } from "./lib-lag-tracker";
import { rng } from "./lib-kube-workload";
import { sleep } from "./lib-proc";

export const GROUP = "scale.krply.dev";
const CRD = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: `widgets.${GROUP}` },
  spec: {
    group: GROUP,
    scope: "Namespaced",
    names: { plural: "widgets", singular: "widget", kind: "Widget", listKind: "WidgetList" },
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
};

export interface Target {
  path: string;
  /** Stream the object belongs to: 0 ConfigMaps, 1 Widgets. */
  kind: 0 | 1;
}

/** A ConfigMap of about 1 KiB, like an application's settings. */
function configMapBody(name: string, r: () => number): object {
  const data: Record<string, string> = {};
  for (let i = 0; i < 6; i++) {
    data[`setting-${i}.properties`] =
      `# generated\nkey.${i}=${Math.floor(r() * 1e9).toString(36)}\n`.repeat(4);
  }
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, labels: { app: name.replace(/-\d+$/, ""), tier: "bench" } },
    data,
  };
}

function widgetBody(name: string, r: () => number): object {
  return {
    apiVersion: `${GROUP}/v1`,
    kind: "Widget",
    metadata: { name, labels: { app: "widgets" } },
    spec: {
      replicas: 1 + Math.floor(r() * 5),
      image: `registry.example.com/widget:${Math.floor(r() * 100)}`,
      ports: [{ name: "http", port: 8080 }],
      env: Array.from({ length: 6 }, (_, i) => ({ name: `VAR_${i}`, value: `v${i}` })),
    },
  };
}

async function post(admin: KubeClient, path: string, body: object): Promise<void> {
  try {
    await admin.json(path, { method: "POST", body });
  } catch (err) {
    if (!(err instanceof ApiError && err.status === 409)) throw err;
  }
}

/** Creates what is missing of the namespaces, the CRD and the objects; returns every target. */
export async function ensureWorkload(
  admin: KubeClient,
  objects: number,
  namespaces: number,
  crShare: number,
  prefix: string,
): Promise<Target[]> {
  const r = rng(42);
  await post(admin, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", CRD);
  for (let i = 0; i < 200; i++) {
    try {
      await admin.json(`/apis/${GROUP}/v1/widgets?limit=1`);
      break;
    } catch {
      await sleep(100);
    }
  }
  const nsNames = Array.from({ length: namespaces }, (_, i) => `${prefix}-${i}`);
  const targets: Target[] = [];
  for (let i = 0; i < objects; i++) {
    const ns = nsNames[i % namespaces];
    const cr = r() < crShare;
    targets.push(
      cr
        ? { path: `/apis/${GROUP}/v1/namespaces/${ns}/widgets/w-${i}`, kind: 1 }
        : { path: `/api/v1/namespaces/${ns}/configmaps/cm-${i}`, kind: 0 },
    );
  }
  const marker = await admin
    .json<{ data?: Record<string, string> }>(`/api/v1/namespaces/${nsNames[0]}/configmaps/done`)
    .catch(() => null);
  if (marker?.data?.objects === String(objects)) return targets;
  const t0 = Date.now();
  let next = 0;
  const nsWorker = async () => {
    for (let i = next++; i < namespaces; i = next++)
      await post(admin, "/api/v1/namespaces", {
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: nsNames[i] },
      });
  };
  await Promise.all(Array.from({ length: 16 }, nsWorker));
  next = 0;
  let done = 0;
  const body = rng(7);
  const worker = async () => {
    for (let i = next++; i < objects; i = next++) {
      const t = targets[i];
      const name = t.path.slice(t.path.lastIndexOf("/") + 1);
      const coll = t.path.slice(0, t.path.lastIndexOf("/"));
      await post(admin, coll, t.kind === 0 ? configMapBody(name, body) : widgetBody(name, body));
      if (++done % 10_000 === 0)
        console.log(`  created ${done}/${objects} (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
  await post(admin, `/api/v1/namespaces/${nsNames[0]}/configmaps`, {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "done" },
    data: { objects: String(objects) },
  });
  console.log(`  workload created in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  return targets;
}

/** Writers that merge-patch random targets (seeded) as fast as the server answers, until stop(). */
export function startWriters(
  admin: KubeClient,
  targets: Target[],
  writers: number,
  seed: number,
  onAck?: (a: Ack) => void,
): { stop: () => Promise<{ writes: number; elapsedMs: number; failures: number }> } {
  let stopped = false;
  let writes = 0;
  let failures = 0;
  const t0 = Date.now();
  // The targets are seeded, so every run writes the same objects in the same order; the values carry
  // this run's id. Without it a run repeated the values of the run before, and the server answered
  // such a patch as a no-op: the old resourceVersion, no write to etcd, no watch event. Those writes
  // were free for the server and "durable" at once, which flattered the ceiling, the rate and the lag.
  const run = `${process.pid.toString(36)}${Date.now().toString(36)}`;
  const loop = async (w: number) => {
    const r = rng(seed + w);
    let n = 0;
    while (!stopped) {
      const t = targets[Math.floor(r() * targets.length)];
      try {
        const o = await admin.json<{ metadata: { resourceVersion: string } }>(t.path, {
          method: "PATCH",
          contentType: "application/merge-patch+json",
          body:
            t.kind === 0
              ? { data: { rev: `${run}-${w}-${n++}` } }
              : { spec: { revision: `${run}-${w}-${n++}` } },
        });
        writes++;
        onAck?.({ kind: t.kind, rv: Number(o.metadata.resourceVersion), at: Date.now() });
      } catch {
        failures++;
        await sleep(50);
      }
    }
  };
  const all = Promise.all(Array.from({ length: writers }, (_, w) => loop(w)));
  return {
    stop: async () => {
      stopped = true;
      await all;
      return { writes, elapsedMs: Date.now() - t0, failures };
    },
  };
}

/**
 * Waits until the server's watch cache of each collection has filled: right after a start it lists
 * every object from etcd (150k here), answers watches 429 meanwhile and spends the CPU that the
 * ceiling would otherwise be measured against.
 */
export async function watchCachesReady(admin: KubeClient, collections: string[]): Promise<void> {
  for (const path of collections) {
    for (let tries = 0; ; tries++) {
      try {
        const list = await admin.json<{ metadata: { resourceVersion: string } }>(path, {
          query: { limit: 1 },
        });
        const res = await admin.stream(path, {
          watch: "true",
          resourceVersion: list.metadata.resourceVersion,
          timeoutSeconds: 1,
        });
        res.body.destroy();
        break;
      } catch (err) {
        if (!(err instanceof ApiError && err.status === 429) || tries > 600) throw err;
        await sleep(err.retryAfterMs ?? 1000);
      }
    }
  }
}
