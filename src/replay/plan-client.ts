import type { KubeClient } from "../kube/client";
import { ApiError } from "../kube/errors";
import { PLAN_ID_LABEL, REPLAY_PLANS_PATH } from "./replay-plan-cr";

/**
 * The few API calls the approval and gate code makes on ReplayPlans. Writes carry the object's
 * resourceVersion as a precondition, so a decision made on a stale copy never lands.
 */
export class PlanClient {
  constructor(private readonly client: KubeClient) {}

  /** Every ReplayPlan part labelled with the plan id. */
  async listParts(planId: string): Promise<unknown[]> {
    const list = await this.client.json<{ items?: unknown[] }>(REPLAY_PLANS_PATH, {
      query: { labelSelector: `${PLAN_ID_LABEL}=${planId}` },
    });
    return list.items ?? [];
  }

  /** One ReplayPlan by name, or undefined when it is gone. */
  async get(name: string): Promise<unknown> {
    try {
      return await this.client.json(`${REPLAY_PLANS_PATH}/${encodeURIComponent(name)}`);
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) return undefined;
      throw err;
    }
  }

  /** Merge-patches status; returns the new resourceVersion, or undefined when the copy was stale (409). */
  async patchStatus(
    name: string,
    resourceVersion: string,
    status: Record<string, unknown>,
  ): Promise<string | undefined> {
    return this.patch(`${encodeURIComponent(name)}/status`, resourceVersion, { status });
  }

  /** Revokes the approval (spec.approved: false); undefined when the copy was stale (409). */
  async revoke(name: string, resourceVersion: string): Promise<string | undefined> {
    return this.patch(encodeURIComponent(name), resourceVersion, { spec: { approved: false } });
  }

  private async patch(
    path: string,
    resourceVersion: string,
    body: Record<string, unknown>,
  ): Promise<string | undefined> {
    try {
      const res = await this.client.json<{ metadata?: { resourceVersion?: string } }>(
        `${REPLAY_PLANS_PATH}/${path}`,
        {
          method: "PATCH",
          contentType: "application/merge-patch+json",
          body: { metadata: { resourceVersion }, ...body },
        },
      );
      return res.metadata?.resourceVersion;
    } catch (err) {
      if (err instanceof ApiError && (err.status === 409 || err.status === 404)) return undefined;
      throw err;
    }
  }

  /** The uid of kube-system: the cluster's identity, as src/watch records it. */
  async kubeSystemUid(): Promise<string> {
    const ns = await this.client.json<{ metadata?: { uid?: string } }>(
      "/api/v1/namespaces/kube-system",
    );
    const uid = ns.metadata?.uid;
    if (!uid) throw new Error("namespace kube-system has no uid");
    return uid;
  }
}
