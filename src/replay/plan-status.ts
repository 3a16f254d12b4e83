import { isDeepStrictEqual } from "node:util";
import type {
  ReplayPlan,
  ReplayPlanCounts,
  ReplayPlanState,
  ReplayPlanStatus,
} from "./replay-plan-cr";

/**
 * The status fields the watcher owns. status.dryRun and status.apply belong to the dry run and apply;
 * the watcher reads them and never writes them.
 */
export type OwnedStatus = Pick<
  ReplayPlanStatus,
  "state" | "message" | "part" | "target" | "counts" | "observedGeneration" | "expiredApproval"
>;

/** Whether the plan's approval stands at `now`. */
export function approvalOf(
  plan: ReplayPlan,
  now: Date,
): { approved: boolean; expired: boolean; expiresAt?: Date } {
  if (plan.spec.approved !== true) return { approved: false, expired: false };
  const at = Date.parse(plan.spec.approvalExpiresAt ?? "");
  // An approval without an expiry stamp never counts; the gate refuses it too.
  if (Number.isNaN(at)) return { approved: true, expired: true };
  return { approved: true, expired: now.getTime() >= at, expiresAt: new Date(at) };
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

function countsOf(plan: ReplayPlan): ReplayPlanCounts {
  const counts: ReplayPlanCounts = { objects: plan.spec.objects.length };
  const dryRun = plan.status?.dryRun;
  if (dryRun && dryRun.digest === plan.spec.digest) Object.assign(counts, dryRun.verdicts ?? {});
  const apply = plan.status?.apply;
  if (apply && apply.digest === plan.spec.digest) {
    if (apply.applied !== undefined) counts.applied = apply.applied;
    if (apply.notApplied !== undefined) counts.notApplied = apply.notApplied;
  }
  return counts;
}

function dryRunSummary(c: ReplayPlanCounts): string {
  return [
    `${c.wouldCreate ?? 0} would create`,
    `${c.wouldChange ?? 0} would change`,
    `${c.unchanged ?? 0} unchanged`,
    plural(c.conflict ?? 0, "conflict"),
    `${c.rejected ?? 0} rejected`,
    plural(c.error ?? 0, "error"),
  ].join(", ");
}

/**
 * The status the watcher writes for a plan at `now`, by precedence: an apply of the current digest
 * (applied or failed), a standing or expired approval, an approval the watcher already revoked for
 * expiry, the dry run of the current digest (dry-run-ok or failed), and otherwise planned.
 */
export function planStatus(plan: ReplayPlan, now: Date): OwnedStatus {
  const { spec } = plan;
  const counts = countsOf(plan);
  const dryRun = plan.status?.dryRun?.digest === spec.digest ? plan.status.dryRun : undefined;
  const apply = plan.status?.apply?.digest === spec.digest ? plan.status.apply : undefined;
  const approval = approvalOf(plan, now);
  const expiredBefore = plan.status?.expiredApproval;
  let state: ReplayPlanState;
  let message: string;
  let expiredApproval: OwnedStatus["expiredApproval"] = approval.approved
    ? undefined
    : expiredBefore;

  if (apply?.ok) {
    state = "applied";
    message = `applied ${plural(apply.applied ?? spec.objects.length, "object")}`;
  } else if (apply) {
    state = "failed";
    message =
      apply.message ??
      `apply stopped: ${apply.applied ?? 0} applied, ${apply.notApplied ?? 0} not applied`;
  } else if (approval.approved && approval.expired) {
    state = "expired";
    message = `the approval by ${spec.approvedBy ?? "<unknown>"} expired at ${spec.approvalExpiresAt ?? "<no stamp>"}`;
    expiredApproval = {
      approvedBy: spec.approvedBy,
      approvedAt: spec.approvedAt,
      expiredAt: spec.approvalExpiresAt,
    };
  } else if (approval.approved) {
    state = "approved";
    message = `approved by ${spec.approvedBy ?? "<unknown>"} until ${spec.approvalExpiresAt}`;
    if (!dryRun?.ok) message += "; no passing dry run of this digest yet";
  } else if (expiredBefore) {
    state = "expired";
    message =
      `the approval by ${expiredBefore.approvedBy ?? "<unknown>"} expired at ` +
      `${expiredBefore.expiredAt ?? "<unknown>"}; approve again to replay`;
  } else if (dryRun?.ok) {
    state = "dry-run-ok";
    message = `dry run passed (${dryRunSummary(counts)}); awaiting approval`;
  } else if (dryRun) {
    state = "failed";
    message = `dry run failed (${dryRunSummary(counts)})`;
  } else {
    state = "planned";
    message = "awaiting a dry run";
  }

  const status: OwnedStatus = {
    state,
    message,
    part: `${spec.part.index + 1}/${spec.part.count}`,
    target: spec.target.namespaces.join(","),
    counts,
  };
  if (plan.metadata.generation !== undefined) status.observedGeneration = plan.metadata.generation;
  if (expiredApproval) status.expiredApproval = expiredApproval;
  return status;
}

/** What one reconcile of a plan does. */
export interface ReconcileStep {
  /**
   * A merge patch for the status subresource (null removes a field), or undefined when the status is
   * already right.
   */
  statusPatch?: Record<string, unknown>;
  /** The approval has expired: revoke it (spec.approved: false) after the status is written. */
  revoke: boolean;
  /** When to look at the plan again (its approval's expiry), without any change to wake us. */
  recheckAt?: Date;
}

const OWNED_KEYS = [
  "state",
  "message",
  "part",
  "target",
  "counts",
  "observedGeneration",
  "expiredApproval",
] as const;

/** Decides one reconcile of a plan: the status to write, whether to revoke, when to look again. */
export function reconcileStep(plan: ReplayPlan, now: Date): ReconcileStep {
  const desired = planStatus(plan, now);
  const current = plan.status ?? {};
  const patch: Record<string, unknown> = {};
  for (const key of OWNED_KEYS) {
    if (!isDeepStrictEqual(desired[key], current[key])) patch[key] = desired[key] ?? null;
  }
  const approval = approvalOf(plan, now);
  return {
    statusPatch: Object.keys(patch).length > 0 ? patch : undefined,
    revoke: approval.approved && approval.expired,
    recheckAt: approval.approved && !approval.expired ? approval.expiresAt : undefined,
  };
}
