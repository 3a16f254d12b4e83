// Objects the size and shape a real cluster has, for the recorder's memory benchmarks: ConfigMaps of
// about 4 KiB, and Deployments created by server-side apply (so the server adds managedFields) with a
// status written through the status subresource, several KiB each. Every random choice comes from
// the caller's seeded generator, so two runs create the same objects.
import type { KubeClient } from "../src/kube/client";
import { ApiError } from "../src/kube/errors";
import { rng } from "./lib-kube-workload";

type Rand = () => number;

const word = (r: Rand) => Math.floor(r() * 36 ** 8).toString(36);

/** A ConfigMap of about 4 KiB of data: application settings, a logging config and a script. */
export function configMap4k(name: string, r: Rand): object {
  const props = Array.from({ length: 40 }, (_, i) => `app.setting.${i}=${word(r)}-${word(r)}`);
  const logging = Array.from(
    { length: 12 },
    (_, i) => `logger.${word(r)}.level=${["INFO", "DEBUG", "WARN"][i % 3]}`,
  );
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name,
      labels: {
        "app.kubernetes.io/name": name.replace(/-\d+$/, ""),
        "app.kubernetes.io/part-of": "shop",
        "app.kubernetes.io/managed-by": "helm",
        "helm.sh/chart": "shop-1.4.2",
      },
      annotations: {
        "meta.helm.sh/release-name": "shop",
        "meta.helm.sh/release-namespace": "shop",
      },
    },
    data: {
      "application.properties": props.join("\n"),
      "logging.properties": logging.join("\n"),
      "entrypoint.sh":
        `#!/bin/sh\nset -eu\nexec /app/bin/server --config /etc/app/application.properties --id ${word(r)} "$@"\n`.repeat(
          6,
        ),
      "feature-flags.json": JSON.stringify(
        Object.fromEntries(Array.from({ length: 24 }, () => [word(r), r() < 0.5])),
      ),
    },
  };
}

/** A Deployment as a Helm chart applies it: probes, resources, env, volumes. */
export function deploymentApply(name: string, r: Rand): object {
  const container = (c: string) => ({
    name: c,
    image: `registry.example.com/shop/${c}:1.${Math.floor(r() * 40)}.${Math.floor(r() * 10)}`,
    imagePullPolicy: "IfNotPresent",
    args: ["--port=8080", "--metrics-port=9090", `--log-level=info`],
    ports: [
      { name: "http", containerPort: 8080, protocol: "TCP" },
      { name: "metrics", containerPort: 9090, protocol: "TCP" },
    ],
    env: Array.from({ length: 14 }, (_, i) => ({ name: `APP_VAR_${i}`, value: word(r) })),
    resources: {
      requests: { cpu: "100m", memory: "128Mi" },
      limits: { cpu: "1", memory: "512Mi" },
    },
    readinessProbe: {
      httpGet: { path: "/ready", port: "http" },
      periodSeconds: 10,
      failureThreshold: 3,
    },
    livenessProbe: { httpGet: { path: "/live", port: "http" }, periodSeconds: 20 },
    volumeMounts: [
      { name: "config", mountPath: "/etc/app" },
      { name: "tmp", mountPath: "/tmp" },
    ],
    securityContext: { runAsNonRoot: true, readOnlyRootFilesystem: true },
  });
  const labels = { "app.kubernetes.io/name": name, "app.kubernetes.io/part-of": "shop" };
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, labels: { ...labels, "helm.sh/chart": "shop-1.4.2" } },
    spec: {
      replicas: 3,
      selector: { matchLabels: labels },
      strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: "25%", maxUnavailable: 0 } },
      template: {
        metadata: { labels, annotations: { "checksum/config": word(r) + word(r) + word(r) } },
        spec: {
          serviceAccountName: name,
          containers: [container("server"), container("sidecar")],
          volumes: [
            { name: "config", configMap: { name: `${name}-config` } },
            { name: "tmp", emptyDir: {} },
          ],
        },
      },
    },
  };
}

/** A Deployment's status as the controller writes it, for generation `gen`. */
export function deploymentStatus(gen: number, r: Rand): object {
  const at = new Date(Date.UTC(2026, 11, 1) + Math.floor(r() * 1e8)).toISOString();
  const ready = Math.floor(r() * 4);
  return {
    status: {
      observedGeneration: gen,
      replicas: 3,
      updatedReplicas: 3,
      readyReplicas: ready,
      availableReplicas: ready,
      unavailableReplicas: 3 - ready,
      conditions: [
        {
          type: "Available",
          status: ready === 3 ? "True" : "False",
          lastUpdateTime: at,
          lastTransitionTime: at,
          reason: ready === 3 ? "MinimumReplicasAvailable" : "MinimumReplicasUnavailable",
          message: `Deployment has ${ready === 3 ? "minimum" : "fewer than minimum"} availability.`,
        },
        {
          type: "Progressing",
          status: "True",
          lastUpdateTime: at,
          lastTransitionTime: at,
          reason: "NewReplicaSetAvailable",
          message: `ReplicaSet "${word(r)}" has successfully progressed.`,
        },
      ],
    },
  };
}

/** Server-side apply of obj to path (the server records a managedFields entry for the manager). */
export async function apply(
  client: KubeClient,
  path: string,
  obj: object,
  manager = "helm",
): Promise<{ metadata: { resourceVersion: string } }> {
  return client.json(path, {
    method: "PATCH",
    query: { fieldManager: manager, force: "true" },
    contentType: "application/apply-patch+yaml",
    body: obj,
  });
}

/** Creates obj unless it exists. */
export async function create(client: KubeClient, collection: string, obj: object): Promise<void> {
  try {
    await client.json(collection, { method: "POST", body: obj });
  } catch (err) {
    if (!(err instanceof ApiError && err.status === 409)) throw err;
  }
}

/**
 * Creates what is missing of `configMaps` 4 KiB ConfigMaps and `deployments` Deployments (applied,
 * with a status) in ns, `parallel` requests at a time; objects that exist are left as they are, so a
 * namespace seeded once serves every later run.
 */
export async function seedNamespace(
  client: KubeClient,
  ns: string,
  opts: { configMaps: number; deployments: number; seed: number; parallel?: number },
): Promise<{ configMaps: string[]; deployments: string[] }> {
  await create(client, "/api/v1/namespaces", {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: ns },
  });
  const cms = Array.from({ length: opts.configMaps }, (_, i) => `settings-${i}`);
  const deps = Array.from({ length: opts.deployments }, (_, i) => `web-${i}`);
  const haveCm = new Set<string>();
  let cont = "";
  do {
    const page = await client.json<{
      items: { metadata: { name: string } }[];
      metadata: { continue?: string };
    }>(`/api/v1/namespaces/${ns}/configmaps`, {
      query: { limit: 1000, continue: cont || undefined },
    });
    for (const it of page.items) haveCm.add(it.metadata.name);
    cont = page.metadata.continue ?? "";
  } while (cont);
  const haveDep = new Set(
    (
      await client.json<{ items: { metadata: { name: string } }[] }>(
        `/apis/apps/v1/namespaces/${ns}/deployments`,
      )
    ).items.map(d => d.metadata.name),
  );
  const jobs: (() => Promise<void>)[] = [];
  cms.forEach((name, i) => {
    if (haveCm.has(name)) return;
    jobs.push(() =>
      create(client, `/api/v1/namespaces/${ns}/configmaps`, configMap4k(name, rngOf(opts.seed, i))),
    );
  });
  deps.forEach((name, i) => {
    if (haveDep.has(name)) return;
    jobs.push(async () => {
      const r = rngOf(opts.seed + 1, i);
      const path = `/apis/apps/v1/namespaces/${ns}/deployments/${name}`;
      await apply(client, path, deploymentApply(name, r));
      await client.json(`${path}/status`, {
        method: "PATCH",
        contentType: "application/merge-patch+json",
        body: deploymentStatus(1, r),
      });
    });
  });
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < jobs.length; i = next++) await jobs[i]();
  };
  await Promise.all(Array.from({ length: opts.parallel ?? 16 }, worker));
  return { configMaps: cms, deployments: deps };
}

// One generator per object, so an object's content does not depend on which others were missing.
function rngOf(seed: number, i: number): Rand {
  return rng(seed * 1_000_003 + i);
}
