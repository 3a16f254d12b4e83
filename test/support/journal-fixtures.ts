// Helpers shared by the journal's tests and benchmark: temp files and realistic objects.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { JournalRecord, KubeObject, StreamKey } from "../../src/event";
import type { CheckpointAdvance } from "../../src/journal";

/** Creates a temp dir and returns the journal path inside it plus a cleanup function. */
export function tempJournalPath(prefix = "krply-journal-"): {
  dir: string;
  path: string;
  cleanup(): void;
} {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return {
    dir,
    path: join(dir, "journal.db"),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** A stream key for tests. */
export function streamKey(
  resource: string,
  group = "",
  version = "v1",
  namespace = "",
  clusterId = "test",
): StreamKey {
  return { clusterId, group, version, resource, namespace, selector: "" };
}

/** A Deployment about 2 KB long, shaped like what the API server returns. */
export function deployment(
  name: string,
  ns: string,
  uid: string,
  rv: number,
  ready: number,
): KubeObject {
  const t = new Date(Date.UTC(2024, 0, 1) + rv * 1000).toISOString().replace(".000", "");
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: {
      name,
      namespace: ns,
      uid,
      resourceVersion: String(rv),
      generation: 4,
      creationTimestamp: "2024-01-01T00:00:00Z",
      labels: { app: name, "app.kubernetes.io/part-of": "shop", tier: "backend" },
      annotations: { "deployment.kubernetes.io/revision": "4" },
      managedFields: [
        {
          manager: "kubectl-client-side-apply",
          operation: "Update",
          apiVersion: "apps/v1",
          time: "2024-01-01T00:00:00Z",
          fieldsType: "FieldsV1",
          fieldsV1: {
            "f:spec": { "f:replicas": {}, "f:template": { "f:spec": { "f:containers": {} } } },
          },
        },
        {
          manager: "kube-controller-manager",
          operation: "Update",
          apiVersion: "apps/v1",
          time: t,
          fieldsType: "FieldsV1",
          subresource: "status",
          fieldsV1: {
            "f:status": { "f:availableReplicas": {}, "f:readyReplicas": {}, "f:conditions": {} },
          },
        },
      ],
    },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: name } },
      strategy: {
        type: "RollingUpdate",
        rollingUpdate: { maxSurge: "25%", maxUnavailable: "25%" },
      },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          containers: [
            {
              name: "app",
              image: `registry.example.com/shop/${name}:1.4.2`,
              ports: [{ containerPort: 8080, protocol: "TCP" }],
              env: [{ name: "LOG_LEVEL", value: "info" }],
              resources: {
                limits: { cpu: "500m", memory: "256Mi" },
                requests: { cpu: "100m", memory: "128Mi" },
              },
              imagePullPolicy: "IfNotPresent",
            },
          ],
          restartPolicy: "Always",
          terminationGracePeriodSeconds: 30,
        },
      },
    },
    status: {
      observedGeneration: 4,
      replicas: 3,
      updatedReplicas: 3,
      readyReplicas: ready,
      availableReplicas: ready,
      conditions: [
        {
          type: "Available",
          status: ready > 0 ? "True" : "False",
          lastUpdateTime: t,
          lastTransitionTime: "2024-01-01T00:00:00Z",
          reason: "MinimumReplicasAvailable",
          message: "Deployment has minimum availability.",
        },
        {
          type: "Progressing",
          status: "True",
          lastUpdateTime: t,
          lastTransitionTime: "2024-01-01T00:00:00Z",
          reason: "NewReplicaSetAvailable",
          message: `ReplicaSet "${name}-7d9f8c6b5" has successfully progressed.`,
        },
      ],
    },
  };
}

/** A small ConfigMap. */
export function configMap(
  name: string,
  ns: string,
  uid: string,
  rv: number,
  data: Record<string, string>,
): KubeObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name,
      namespace: ns,
      uid,
      resourceVersion: String(rv),
      creationTimestamp: "2024-01-01T00:00:00Z",
    },
    data,
  };
}

/** ISO time n seconds after a fixed origin. */
export function at(n: number): string {
  return new Date(Date.UTC(2024, 0, 1) + n * 1000).toISOString();
}

/** One checkpoint per stream of a batch, at its last record's RV: what a recorder would advance. */
export function checkpointsOf(recs: readonly JournalRecord[]): CheckpointAdvance[] {
  const last = new Map<string, JournalRecord>();
  for (const r of recs) last.set(r.streamId, r);
  return [...last.values()].map(r => ({
    streamId: r.streamId,
    resourceVersion: r.resource!.resourceVersion,
    observedAt: r.observedAt,
  }));
}
