import { randomBytes } from "node:crypto";
import type { KubeClient } from "../kube/client";
import { clusterIdentity } from "../watch/cluster-identity";
import { planDigest } from "./digest";
import { verdictOfError } from "./dry-run";
import { clusterUidOf } from "./gate";
import { resolveOwners } from "./owners";
import { approvalProblem, readPlanParts } from "./plan-cr";
import { applyPatch, messageOf } from "./requests";
import type { ApplyItem, ApplyRun, DryRun, Plan } from "./types";

export interface ApplyOptions {
  /** The user said yes on the command line (or in the API request). */
  confirm: boolean;
  now?: () => Date;
}

/** Apply will not start: the plan is not provably safe and approved for this target. */
export class ApplyRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ApplyRefused";
  }
}

/** Everything that must hold before the first write; throws ApplyRefused naming the first failure. */
export async function checkApply(
  client: KubeClient,
  plan: Plan,
  dryRun: DryRun | null,
  opts: ApplyOptions,
): Promise<void> {
  const now = (opts.now ?? (() => new Date()))();
  const { digest, ...body } = plan;
  if (planDigest(body) !== digest)
    throw new ApplyRefused(
      `plan ${plan.id} does not match its digest; it was changed after planning`,
    );
  if (!dryRun)
    throw new ApplyRefused(
      `plan ${plan.id} has no dry run; run \`krply replay dry-run ${plan.id}\``,
    );
  if (dryRun.digest !== digest)
    throw new ApplyRefused(
      `the last dry run of ${plan.id} was for digest ${dryRun.digest}, not ${digest}`,
    );
  if (!dryRun.ok)
    throw new ApplyRefused(
      `the last dry run of ${plan.id} is not ok (${dryRun.counts.conflict} conflicts, ${dryRun.counts.rejected} rejected, ${dryRun.counts.error} errors)`,
    );
  // Clusters are compared by their kube-system UID, as the gate does: the same cluster is reached
  // under another host from inside (the sidecar) than from a workstation.
  const id = await clusterIdentity(client);
  if (id.kubeSystemUid !== clusterUidOf(plan.target.clusterId))
    throw new ApplyRefused(
      `the cluster reached is ${id.clusterId}, but plan ${plan.id} targets ${plan.target.clusterId}`,
    );
  if (id.kubeSystemUid === clusterUidOf(plan.source.clusterId) && !plan.target.isSource)
    throw new ApplyRefused(
      `the cluster reached is the plan's source cluster, which the plan does not name as its target`,
    );
  const problem = approvalProblem(await readPlanParts(client, plan.id), plan, now);
  if (problem) throw new ApplyRefused(problem);
  if (!opts.confirm)
    throw new ApplyRefused(`plan ${plan.id} is approved; pass --confirm to apply it`);
}

/**
 * Applies an approved, dry-run-ok plan in dependency order: one server-side apply per object with the
 * plan's field manager, never forced. The first failure stops the run; the result says, object by
 * object, what was applied and what was not.
 */
export async function applyPlan(
  client: KubeClient,
  plan: Plan,
  dryRun: DryRun | null,
  opts: ApplyOptions,
): Promise<ApplyRun> {
  const now = opts.now ?? (() => new Date());
  const startedAt = now().toISOString();
  await checkApply(client, plan, dryRun, opts);
  const items: ApplyItem[] = [];
  let failure: string | undefined;
  for (const obj of plan.objects) {
    if (failure) {
      items.push({ ref: obj.ref, result: "not-applied" });
      continue;
    }
    try {
      const manifest = await resolveOwners(client, plan, obj, "apply");
      const res = await applyPatch(client, obj.ref, manifest, plan.fieldManager, false);
      items.push({ ref: obj.ref, result: res.status === 201 ? "created" : "configured" });
    } catch (err) {
      const v = verdictOfError(err);
      failure = `${obj.ref.kind} ${obj.ref.namespace ? `${obj.ref.namespace}/` : ""}${obj.ref.name}: ${v.verdict}: ${v.message ?? messageOf(err)}`;
      items.push({ ref: obj.ref, result: "failed", message: v.message ?? messageOf(err) });
    }
  }
  const applied = items.filter(i => i.result === "created" || i.result === "configured").length;
  return {
    runId: `run-${randomBytes(5).toString("hex")}`,
    planId: plan.id,
    digest: plan.digest,
    startedAt,
    finishedAt: now().toISOString(),
    ok: failure === undefined,
    applied,
    notApplied: items.length - applied,
    items,
    ...(failure ? { message: `stopped at ${failure}` } : {}),
  };
}
