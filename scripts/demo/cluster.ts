// Talking to the demo's cluster: the bounded reachability probe, and the shop's writes.
import { KubeClient, loadKubeConfig } from "../../src/kube/client";
import { clusterRoleGrant } from "../../test/support/rbac";
import type { ShopStep } from "./shop";
import { COUPON_CRD, SHOP_NAMESPACE } from "./shop";

/** What the probe found out about the current kubeconfig context. */
export type ProbeResult =
  | { reachable: true; server: string; context: string; version: string }
  | { reachable: false; server: string | null; context: string | null; reason: string };

const errorText = (err: unknown): string => {
  const e = err as Error;
  const cause = e?.cause instanceof Error ? `: ${e.cause.message}` : "";
  return `${e?.message ?? String(err)}${cause}`;
};

/**
 * GET /version on the current context, given timeoutMs in all: a missing kubeconfig, a stale context or
 * a cluster that is off answers "unreachable" quickly instead of hanging the demo.
 */
export async function probeCluster(
  source: { kubeconfig?: string; context?: string },
  timeoutMs: number,
): Promise<ProbeResult> {
  let server: string | null = null;
  let context: string | null = null;
  let client: KubeClient | undefined;
  try {
    const kc = loadKubeConfig(source);
    context = kc.getCurrentContext() || null;
    server = kc.getCurrentCluster()?.server ?? null;
    const work = (async () => {
      client = await KubeClient.create(kc);
      return client.json<{ gitVersion?: string }>("/version", {
        signal: AbortSignal.timeout(timeoutMs),
      });
    })();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    });
    const version = await Promise.race([work, late]).finally(() => clearTimeout(timer));
    return {
      reachable: true,
      server: server ?? "",
      context: context ?? "",
      version: version.gitVersion ?? "unknown",
    };
  } catch (err) {
    return { reachable: false, server, context, reason: errorText(err) };
  } finally {
    await client?.close().catch(() => undefined);
  }
}

/** Writes to a throwaway demo API server (never to a user's cluster), as its admin. */
export class ShopWriter {
  private constructor(private readonly client: KubeClient) {}

  static async open(adminKubeconfig: string): Promise<ShopWriter> {
    return new ShopWriter(await KubeClient.create(loadKubeConfig({ kubeconfig: adminKubeconfig })));
  }

  /** Server-side apply (idempotent), so a demo run again on a kept harness starts the same way. */
  private async apply(path: string, body: object): Promise<void> {
    await this.client.json(path, {
      method: "PATCH",
      query: { fieldManager: "krply-demo", force: true },
      body,
      contentType: "application/apply-patch+yaml",
    });
  }

  /**
   * The shop namespace and the Coupon CRD, established, before anything is recorded; and read access to
   * coupons for the harness's read-only `recorder` user, whose built-in role knows only built-in kinds.
   */
  async prepare(): Promise<void> {
    const couponReader = {
      apiGroups: [COUPON_CRD.spec.group],
      resources: ["coupons"],
      verbs: ["get", "list", "watch"],
    };
    for (const o of clusterRoleGrant("krply-demo-coupon-reader", [couponReader], "recorder")) {
      await this.apply(o.path, o.body);
    }
    await this.apply(`/api/v1/namespaces/${SHOP_NAMESPACE}`, {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: SHOP_NAMESPACE },
    });
    await this.apply(
      `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${COUPON_CRD.metadata.name}`,
      COUPON_CRD,
    );
    const deadline = Date.now() + 60_000;
    for (;;) {
      const crd = await this.client.json<{
        status?: { conditions?: { type: string; status: string }[] | null };
      }>(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${COUPON_CRD.metadata.name}`);
      if (crd.status?.conditions?.some(c => c.type === "Established" && c.status === "True")) break;
      if (Date.now() > deadline) throw new Error("the Coupon CRD was not established within 60 s");
      await new Promise(r => setTimeout(r, 200));
    }
  }

  /**
   * Runs one step. A create of an object that exists (a demo run again on a kept API server) replaces
   * it by server-side apply instead, so the step still leaves the intended state. Returns the new RV.
   */
  async run(step: ShopStep): Promise<string> {
    type Written = { metadata: { resourceVersion: string } };
    if (step.method === "POST") {
      const name = (step.body as { metadata: { name: string } }).metadata.name;
      const res = await this.client.jsonWithStatus<Written>(`${step.path}/${name}`, {
        method: "PATCH",
        query: { fieldManager: "krply-demo", force: true },
        body: step.body,
        contentType: "application/apply-patch+yaml",
      });
      return res.data.metadata.resourceVersion;
    }
    const res = await this.client.json<Written>(step.path, {
      method: "PATCH",
      // Named, so the journal's actor column says who changed the shop.
      query: { fieldManager: "shop-admin" },
      body: step.body,
      contentType: "application/merge-patch+json",
    });
    return res.metadata.resourceVersion;
  }

  /** Applies a manifest (the ReplayPlan CRD for the module). */
  async applyObject(path: string, body: object): Promise<void> {
    await this.apply(path, body);
  }

  /** A dry-run ReplayPlan create: 201 once the module's webhooks (mutate and validate) answer it. */
  async dryRunPlan(): Promise<number> {
    const { REPLAY_PLANS_PATH, replayPlanParts } = await import("../../src/replay");
    const [probe] = replayPlanParts({
      planId: "demo-readiness-probe",
      digest: `sha256:${"0".repeat(64)}`,
      source: { cluster: "probe" },
      target: { cluster: "probe", namespaces: [SHOP_NAMESPACE] },
      objects: [],
    });
    try {
      const res = await this.client.jsonWithStatus(REPLAY_PLANS_PATH, {
        method: "POST",
        query: { dryRun: "All" },
        body: probe,
      });
      return res.status;
    } catch (err) {
      return (err as { status?: number }).status ?? 0;
    }
  }

  /** Deletes an object; a missing one is fine. */
  async remove(path: string): Promise<void> {
    await this.client.json(path, { method: "DELETE" }).catch((err: unknown) => {
      if ((err as { status?: number }).status !== 404) throw err;
    });
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}
