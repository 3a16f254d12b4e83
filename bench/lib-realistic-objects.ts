// Objects the size and shape a real cluster has, for the recorder's memory benchmarks: ConfigMaps of
// about 4 KiB, and Deployments and Pods created by server-side apply (so the server adds managedFields)
// with a status written through the status subresource, several KiB each. Every random choice comes
// from the caller's seeded generator, so two runs create the same objects.
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

/**
 * A Pod as a Deployment's ReplicaSet makes it and the scheduler places it: owner reference, labels
 * with the template hash, two containers (env, resources, probes, mounts), the service account token
 * volume, the default tolerations and a node name. The harness runs no scheduler or kubelet, so the
 * node is named here and the status comes from podStatus.
 */
export function podApply(name: string, r: Rand): object {
  const app = name.replace(/-[a-z0-9]+-[a-z0-9]+$/, "");
  const hash = word(r).slice(0, 10);
  const container = (c: string, port: number) => ({
    name: c,
    image: `registry.example.com/shop/${c}:1.${Math.floor(r() * 40)}.${Math.floor(r() * 10)}`,
    imagePullPolicy: "IfNotPresent",
    args: [`--port=${port}`, "--metrics-port=9090", "--log-level=info"],
    ports: [{ name: c === "server" ? "http" : "proxy", containerPort: port, protocol: "TCP" }],
    env: [
      ...Array.from({ length: 12 }, (_, i) => ({ name: `APP_VAR_${i}`, value: word(r) })),
      {
        name: "POD_NAME",
        valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "metadata.name" } },
      },
      { name: "POD_IP", valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "status.podIP" } } },
    ],
    resources: {
      requests: { cpu: "100m", memory: "128Mi" },
      limits: { cpu: "1", memory: "512Mi" },
    },
    readinessProbe: {
      httpGet: { path: "/ready", port, scheme: "HTTP" },
      periodSeconds: 10,
      timeoutSeconds: 1,
      successThreshold: 1,
      failureThreshold: 3,
    },
    livenessProbe: {
      httpGet: { path: "/live", port, scheme: "HTTP" },
      periodSeconds: 20,
      timeoutSeconds: 1,
      successThreshold: 1,
      failureThreshold: 3,
    },
    volumeMounts: [
      { name: "config", mountPath: "/etc/app" },
      { name: "tmp", mountPath: "/tmp" },
      {
        name: "kube-api-access",
        mountPath: "/var/run/secrets/kubernetes.io/serviceaccount",
        readOnly: true,
      },
    ],
    terminationMessagePath: "/dev/termination-log",
    terminationMessagePolicy: "File",
    securityContext: {
      runAsNonRoot: true,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ["ALL"] },
    },
  });
  const toleration = (key: string) => ({
    key,
    operator: "Exists",
    effect: "NoExecute",
    tolerationSeconds: 300,
  });
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name,
      labels: {
        "app.kubernetes.io/name": app,
        "app.kubernetes.io/part-of": "shop",
        "pod-template-hash": hash,
      },
      annotations: { "checksum/config": word(r) + word(r) + word(r) },
      ownerReferences: [
        {
          apiVersion: "apps/v1",
          kind: "ReplicaSet",
          name: `${app}-${hash}`,
          uid: `${word(r)}-${word(r).slice(0, 4)}-${word(r).slice(0, 4)}-${word(r)}`,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      serviceAccountName: app,
      nodeName: `node-${Math.floor(r() * 20)}`,
      containers: [container("server", 8080), container("proxy", 15001)],
      volumes: [
        { name: "config", configMap: { name: `${app}-config`, defaultMode: 420 } },
        { name: "tmp", emptyDir: {} },
        {
          name: "kube-api-access",
          projected: {
            defaultMode: 420,
            sources: [
              { serviceAccountToken: { expirationSeconds: 3607, path: "token" } },
              {
                configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] },
              },
              {
                downwardAPI: {
                  items: [
                    {
                      path: "namespace",
                      fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" },
                    },
                  ],
                },
              },
            ],
          },
        },
      ],
      tolerations: [
        toleration("node.kubernetes.io/not-ready"),
        toleration("node.kubernetes.io/unreachable"),
      ],
      restartPolicy: "Always",
      terminationGracePeriodSeconds: 30,
      dnsPolicy: "ClusterFirst",
      schedulerName: "default-scheduler",
      securityContext: { fsGroup: 2000, seccompProfile: { type: "RuntimeDefault" } },
      enableServiceLinks: true,
    },
  };
}

/** The labels and annotations a second controller (a service mesh's injector) applies to a Pod. */
export function podMeshApply(name: string, r: Rand): object {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name,
      labels: { "security.istio.io/tlsMode": "istio", "service.istio.io/canonical-revision": "1" },
      annotations: {
        "sidecar.istio.io/status": JSON.stringify({
          initContainers: ["istio-init"],
          containers: ["istio-proxy"],
          volumes: ["istio-envoy", "istio-data", "istio-podinfo", "istio-token"],
          revision: "default",
        }),
        "prometheus.io/scrape": "true",
        "prometheus.io/port": "15020",
        "kubectl.kubernetes.io/default-container": "server",
        "trace-id": word(r),
      },
    },
  };
}

/** A running Pod's status as the kubelet writes it: conditions, IPs and both containers' states. */
export function podStatus(r: Rand): object {
  const at = (ms: number) => new Date(Date.UTC(2026, 11, 1) + ms).toISOString();
  const start = Math.floor(r() * 1e8);
  const ip = (a: number) =>
    `${a}.${Math.floor(r() * 250)}.${Math.floor(r() * 250)}.${Math.floor(r() * 250) + 1}`;
  const hostIP = ip(10);
  const podIP = ip(172);
  const condition = (type: string, ms: number) => ({
    type,
    status: "True",
    lastProbeTime: null,
    lastTransitionTime: at(start + ms),
  });
  const container = (c: string) => ({
    name: c,
    state: { running: { startedAt: at(start + 3000) } },
    lastState: {},
    ready: true,
    restartCount: Math.floor(r() * 3),
    image: `registry.example.com/shop/${c}:1.${Math.floor(r() * 40)}.${Math.floor(r() * 10)}`,
    imageID: `registry.example.com/shop/${c}@sha256:${word(r)}${word(r)}${word(r)}${word(r)}${word(r)}${word(r)}${word(r)}${word(r)}`,
    containerID: `containerd://${word(r)}${word(r)}${word(r)}${word(r)}${word(r)}${word(r)}${word(r)}${word(r)}`,
    started: true,
  });
  return {
    status: {
      phase: "Running",
      conditions: [
        condition("PodReadyToStartContainers", 2000),
        condition("Initialized", 0),
        condition("Ready", 9000),
        condition("ContainersReady", 9000),
        condition("PodScheduled", 0),
      ],
      hostIP,
      hostIPs: [{ ip: hostIP }],
      podIP,
      podIPs: [{ ip: podIP }],
      startTime: at(start),
      containerStatuses: [container("proxy"), container("server")],
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
 * Creates what is missing of `configMaps` 4 KiB ConfigMaps, `deployments` Deployments (applied, with
 * a status) and `pods` Pods (applied by two managers, with the kubelet's status) in ns, `parallel`
 * requests at a time; objects that exist are left as they are, so a namespace seeded once serves
 * every later run.
 */
export async function seedNamespace(
  client: KubeClient,
  ns: string,
  opts: { configMaps: number; deployments: number; pods?: number; seed: number; parallel?: number },
): Promise<{ configMaps: string[]; deployments: string[]; pods: string[] }> {
  await create(client, "/api/v1/namespaces", {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: ns },
  });
  const cms = Array.from({ length: opts.configMaps }, (_, i) => `settings-${i}`);
  const deps = Array.from({ length: opts.deployments }, (_, i) => `web-${i}`);
  // Named as a ReplicaSet names its Pods: the app, the template hash, a random suffix.
  const pods = Array.from({ length: opts.pods ?? 0 }, (_, i) => {
    const r = rngOf(opts.seed + 2, i);
    return `web-${i % 50}-${word(r).slice(0, 9)}-${word(r).slice(0, 5)}`;
  });
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
  const names = async (collection: string) =>
    new Set(
      (await client.json<{ items: { metadata: { name: string } }[] }>(collection)).items.map(
        d => d.metadata.name,
      ),
    );
  const haveDep = await names(`/apis/apps/v1/namespaces/${ns}/deployments`);
  const havePod = await names(`/api/v1/namespaces/${ns}/pods`);
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
  pods.forEach((name, i) => {
    if (havePod.has(name)) return;
    jobs.push(async () => {
      // Its own generator, after the one that drew the name, so content and name stay independent.
      const r = rngOf(opts.seed + 3, i);
      const path = `/api/v1/namespaces/${ns}/pods/${name}`;
      await apply(client, path, podApply(name, r), "kube-controller-manager");
      await apply(client, path, podMeshApply(name, r), "istio-sidecar-injector");
      await client.json(`${path}/status`, {
        method: "PATCH",
        query: { fieldManager: "kubelet" },
        contentType: "application/merge-patch+json",
        body: podStatus(r),
      });
    });
  });
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < jobs.length; i = next++) await jobs[i]();
  };
  await Promise.all(Array.from({ length: opts.parallel ?? 16 }, worker));
  return { configMaps: cms, deployments: deps, pods };
}

// One generator per object, so an object's content does not depend on which others were missing.
function rngOf(seed: number, i: number): Rand {
  return rng(seed * 1_000_003 + i);
}
