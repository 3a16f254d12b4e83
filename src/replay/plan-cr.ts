import type { KubeClient } from "../kube/client";
import { ApiError } from "../kube/errors";
import {
  PLAN_ID_LABEL,
  REPLAY_PLANS_PATH,
  ReplayPlanSchema,
  replayPlanParts,
  type ApplyStatus,
  type DryRunStatus,
  type ReplayPlan,
} from "./replay-plan-cr";
import { approvalOf } from "./plan-status";
import type { ApplyRun, DryRun, Plan } from "./types";

/** The ReplayPlan objects (summary parts) of a plan: refs, digest, source and target. */
export function planParts(plan: Plan): ReplayPlan[] {
  return replayPlanParts({
    planId: plan.id,
    digest: plan.digest,
    source: {
      cluster: plan.source.clusterId,
      namespaces: plan.source.namespaces,
      ...(plan.source.snapshotId ? { snapshot: plan.source.snapshotId } : { at: plan.source.at }),
    },
    target: { cluster: plan.target.clusterId, namespaces: plan.targetNamespaces },
    objects: plan.objects.map(o => ({
      apiVersion: o.ref.group ? `${o.ref.group}/${o.ref.version}` : o.ref.version,
      kind: o.ref.kind,
      ...(o.ref.namespace ? { namespace: o.ref.namespace } : {}),
      name: o.ref.name,
    })),
  });
}

/** Creates the plan's ReplayPlan objects in the target; an existing part with the same digest is kept. */
export async function publishPlan(client: KubeClient, plan: Plan): Promise<ReplayPlan[]> {
  const out: ReplayPlan[] = [];
  for (const part of planParts(plan)) {
    try {
      out.push(
        ReplayPlanSchema.parse(
          await client.json(REPLAY_PLANS_PATH, { method: "POST", body: part }),
        ),
      );
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 409)) throw err;
      const existing = ReplayPlanSchema.parse(
        await client.json(`${REPLAY_PLANS_PATH}/${part.metadata.name}`),
      );
      if (existing.spec.digest !== plan.digest)
        throw new Error(`ReplayPlan ${part.metadata.name} exists with another digest`, {
          cause: err,
        });
      out.push(existing);
    }
  }
  return out;
}

/** Every ReplayPlan part of a plan, read from the API server (the approval lives there). */
export async function readPlanParts(client: KubeClient, planId: string): Promise<ReplayPlan[]> {
  const list = await client.json<{ items?: unknown[] }>(REPLAY_PLANS_PATH, {
    query: { labelSelector: `${PLAN_ID_LABEL}=${planId}` },
  });
  return (list.items ?? [])
    .map(i => ReplayPlanSchema.parse(i))
    .filter(p => p.spec.planId === planId)
    .sort((a, b) => a.spec.part.index - b.spec.part.index);
}

/** Why a plan's parts do not amount to a valid approval of this digest, or null when they do. */
export function approvalProblem(parts: ReplayPlan[], plan: Plan, now: Date): string | null {
  if (parts.length === 0) return `no ReplayPlan object for plan ${plan.id} exists in the target`;
  const count = parts[0].spec.part.count;
  if (parts.length !== count)
    return `plan ${plan.id} has ${parts.length} of its ${count} ReplayPlan parts`;
  for (const p of parts) {
    const name = p.metadata.name ?? plan.id;
    if (p.spec.digest !== plan.digest)
      return `ReplayPlan ${name} approves digest ${p.spec.digest}, not the plan's ${plan.digest}`;
    const approval = approvalOf(p, now);
    if (!approval.approved) return `ReplayPlan ${name} is not approved`;
    if (!p.spec.approvedBy) return `ReplayPlan ${name} has no attested approver`;
    if (approval.expired)
      return `the approval of ReplayPlan ${name} expired${p.spec.approvalExpiresAt ? ` at ${p.spec.approvalExpiresAt}` : " (it carries no expiry stamp)"}`;
  }
  return null;
}

/** Writes a status field (dryRun or apply) on every part; best effort, the journal holds the truth. */
async function patchStatus(
  client: KubeClient,
  planId: string,
  status: { dryRun?: DryRunStatus; apply?: ApplyStatus },
): Promise<string[]> {
  const problems: string[] = [];
  let parts: ReplayPlan[] = [];
  try {
    parts = await readPlanParts(client, planId);
  } catch (err) {
    return [
      `could not read ReplayPlan ${planId}: ${err instanceof Error ? err.message : String(err)}`,
    ];
  }
  for (const p of parts) {
    try {
      await client.json(`${REPLAY_PLANS_PATH}/${p.metadata.name}/status`, {
        method: "PATCH",
        body: { status },
        contentType: "application/merge-patch+json",
      });
    } catch (err) {
      problems.push(
        `could not write the status of ReplayPlan ${p.metadata.name}: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  }
  return problems;
}

export function dryRunStatusOf(d: DryRun): DryRunStatus {
  return {
    digest: d.digest,
    at: d.at,
    ok: d.ok,
    verdicts: {
      wouldCreate: d.counts["would-create"],
      wouldChange: d.counts["would-change"],
      unchanged: d.counts.unchanged,
      conflict: d.counts.conflict,
      rejected: d.counts.rejected,
      error: d.counts.error,
    },
  };
}

export const writeDryRunStatus = (client: KubeClient, d: DryRun): Promise<string[]> =>
  patchStatus(client, d.planId, { dryRun: dryRunStatusOf(d) });

export const writeApplyStatus = (client: KubeClient, r: ApplyRun): Promise<string[]> =>
  patchStatus(client, r.planId, {
    apply: {
      digest: r.digest,
      at: r.finishedAt,
      ok: r.ok,
      applied: r.applied,
      notApplied: r.notApplied,
      ...(r.message ? { message: r.message } : {}),
    },
  });
