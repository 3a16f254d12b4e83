import { PLAN_LABEL } from "./webhook";

/**
 * Settings of the objects krply adds to Pepr's output. The manifests get concrete values; the chart
 * gets Helm expressions (see helm-text.ts), so both install paths come from these same functions.
 */
export interface KrplySettings {
  name: string;
  namespace: string;
  image: string | number;
  journalSize: string;
  storageClassName: string;
  apiAuth: string;
  sidecarResources: Record<string, unknown> | string;
}

type Json = Record<string, unknown>;

/** The recorder serves its own registry here (KRPLY_METRICS_PORT's default). */
export const METRICS_PORT = 9464;
export const JOURNAL_DIR = "/var/lib/krply";
export const KEY_DIR = "/etc/krply/digest-key";

export const journalClaimName = (s: KrplySettings) => `${s.name}-journal`;
export const digestSecretName = (s: KrplySettings) => `${s.name}-digest-key`;
export const apiServiceName = (s: KrplySettings) => `${s.name}-api`;

const labels = (s: KrplySettings, component: string) => ({
  "app.kubernetes.io/name": "krply",
  "app.kubernetes.io/component": component,
  "pepr.dev/uuid": s.name.replace(/^pepr-/, ""),
});

/**
 * The journal's volume. It survives `helm uninstall` on purpose (the history is the product), so a
 * re-install resumes the same journal; the README says how to delete it.
 */
export function journalClaim(s: KrplySettings): Json {
  return {
    apiVersion: "v1",
    kind: "PersistentVolumeClaim",
    metadata: {
      name: journalClaimName(s),
      namespace: s.namespace,
      labels: labels(s, "journal"),
      annotations: { "helm.sh/resource-policy": "keep" },
    },
    spec: {
      accessModes: ["ReadWriteOnce"],
      ...(s.storageClassName === "" ? {} : { storageClassName: s.storageClassName }),
      resources: { requests: { storage: s.journalSize } },
    },
  };
}

/** The ClusterIP Service users reach with `kubectl port-forward svc/<name>-api 8080`. */
export function apiService(s: KrplySettings): Json {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: apiServiceName(s), namespace: s.namespace, labels: labels(s, "api") },
    spec: {
      type: "ClusterIP",
      selector: { app: `${s.name}-watcher`, "pepr.dev/controller": "watcher" },
      // The pod is unready while the recorder is (a stream waiting for its baseline or its
      // permission); the history is most wanted exactly then, and the sidecar says itself what it
      // knows, so the Service keeps its endpoint.
      publishNotReadyAddresses: true,
      ports: [
        { name: "http", port: 8080, targetPort: "http", protocol: "TCP" },
        { name: "recorder-metrics", port: METRICS_PORT, targetPort: "metrics", protocol: "TCP" },
      ],
    },
  };
}

const hardened = {
  runAsUser: 65532,
  runAsGroup: 65532,
  runAsNonRoot: true,
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  capabilities: { drop: ["ALL"] },
};

/** Mounts the journal and the digest key; the recorder and the sidecar both use them. */
export function krplyMounts(): Json[] {
  return [
    { name: "journal", mountPath: JOURNAL_DIR },
    { name: "digest-key", mountPath: KEY_DIR, readOnly: true },
    // The root filesystem is read-only; SQLite and Node need a writable temp directory.
    { name: "tmp", mountPath: "/tmp" },
  ];
}

export function krplyVolumes(s: KrplySettings): Json[] {
  return [
    { name: "journal", persistentVolumeClaim: { claimName: journalClaimName(s) } },
    { name: "digest-key", secret: { secretName: digestSecretName(s) } },
    { name: "tmp", emptyDir: {} },
  ];
}

/** Environment both containers share: where the journal and the key are. */
export function krplyEnv(): Json[] {
  return [
    { name: "KRPLY_JOURNAL", value: `${JOURNAL_DIR}/journal.db` },
    { name: "KRPLY_REDACT_KEY_FILE", value: `${KEY_DIR}/key` },
  ];
}

/**
 * Node flags of the query sidecar (V8's flags hold for its workers too, and override a worker's
 * resourceLimits). Node's default young generation commits 32 MiB up front, and V8 lets the old
 * generation grow to about four times what is live before collecting it: under load the main
 * thread's heap reached 100 MiB, of which 25 MiB was live. 2 MiB semi-spaces (a 4 MiB young
 * generation in each of the sidecar's four threads; 4 MiB semi-spaces kept 15 MiB more resident at
 * the same CPU per request) and a growth factor of 1.5 keep the sidecar within its memory budget
 * (docs/benchmarks.md, api); the benchmarks run the sidecar with these flags too.
 */
export const SIDECAR_NODE_FLAGS = ["--max-semi-space-size=2", "--heap-growing-percent=50"] as const;

/** The query sidecar: the same image, running dist/api/main.js against the shared journal. */
export function sidecarContainer(s: KrplySettings): Json {
  const probe = (path: string) => ({
    httpGet: { path, port: "http", scheme: "HTTP" },
    initialDelaySeconds: 5,
    periodSeconds: 10,
  });
  return {
    name: "api",
    image: s.image,
    imagePullPolicy: "IfNotPresent",
    command: ["node", ...SIDECAR_NODE_FLAGS, "/app/dist/api/main.js"],
    ports: [{ name: "http", containerPort: 8080, protocol: "TCP" }],
    env: [
      ...krplyEnv(),
      { name: "KRPLY_API_HOST", value: "0.0.0.0" },
      { name: "KRPLY_API_PORT", value: "8080" },
      { name: "KRPLY_API_AUTH", value: s.apiAuth },
    ],
    readinessProbe: probe("/v1/ready"),
    livenessProbe: probe("/v1/health"),
    resources: s.sidecarResources,
    securityContext: hardened,
    volumeMounts: krplyMounts(),
  };
}

/**
 * The watcher container's additions: the journal, the key, the recorder's metrics port, and the
 * hardened security context Pepr's defaults leave out (a read-only root filesystem).
 */
export function watcherAdditions(): { env: Json[]; mounts: Json[]; ports: Json[] } {
  return {
    env: [
      // KRPLY_JOURNAL is already in the module's env (package.json), which Pepr renders.
      { name: "KRPLY_REDACT_KEY_FILE", value: `${KEY_DIR}/key` },
      { name: "KRPLY_METRICS_PORT", value: String(METRICS_PORT) },
    ],
    mounts: krplyMounts(),
    ports: [{ name: "metrics", containerPort: METRICS_PORT, protocol: "TCP" }],
  };
}

/** The label every replay write carries, re-exported for the chart's notes and tests. */
export { PLAN_LABEL };
