// Shared by the replay integration tests and bench/replay.ts: the ReplayPlan CRD, and an admin client.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { KubeClient, loadKubeConfig } from "../../src/kube/client";
import { ApiError } from "../../src/kube/errors";

const CRD_PATH = join(__dirname, "../../deploy/crds/replayplan.yaml");

/** A client for one harness user (one undici Agent; close it when done). */
export function clientOf(kubeconfig: string): Promise<KubeClient> {
  return KubeClient.create(loadKubeConfig({ kubeconfig }));
}

/** Installs (or updates) the ReplayPlan CRD from deploy/ and waits until it is served. */
export async function installReplayPlanCrd(admin: KubeClient): Promise<void> {
  const crd = parse(readFileSync(CRD_PATH, "utf8")) as Record<string, unknown>;
  await admin.json(
    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/replayplans.krply.dev",
    {
      method: "PATCH",
      query: { fieldManager: "krply-test", force: true },
      body: JSON.stringify(crd),
      contentType: "application/apply-patch+yaml",
    },
  );
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      await admin.json("/apis/krply.dev/v1alpha1/replayplans", { query: { limit: 1 } });
      return;
    } catch (err) {
      if (!(err instanceof ApiError) || Date.now() > deadline) throw err;
      await new Promise(r => setTimeout(r, 200));
    }
  }
}

/** Creates a namespace (a 409 is fine). */
export async function ensureNamespace(
  admin: KubeClient,
  name: string,
  labels: Record<string, string> = {},
): Promise<void> {
  try {
    await admin.json("/api/v1/namespaces", {
      method: "POST",
      body: { apiVersion: "v1", kind: "Namespace", metadata: { name, labels } },
    });
  } catch (err) {
    if (!(err instanceof ApiError && err.status === 409)) throw err;
  }
}
