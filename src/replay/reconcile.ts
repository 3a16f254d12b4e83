import { ReplayPlanSchema } from "./replay-plan-cr";
import { reconcileStep } from "./plan-status";

/** The writes one reconcile may make; each returns the new resourceVersion, or undefined if stale. */
export interface ReconcileWrites {
  patchStatus(
    name: string,
    resourceVersion: string,
    status: Record<string, unknown>,
  ): Promise<string | undefined>;
  revoke(name: string, resourceVersion: string): Promise<string | undefined>;
}

/** What one reconcile did, for logs and tests. */
export interface ReconcileOutcome {
  name: string;
  /** Why nothing was done, when nothing was. */
  skipped?: string;
  statusWritten: boolean;
  revoked: boolean;
  /** Stale copy: a newer version of the plan is on its way and gets its own reconcile. */
  stale: boolean;
  recheckAt?: Date;
}

/**
 * Reconciles one ReplayPlan as the watcher's Reconcile binding hands it over: writes its status and,
 * once its approval has expired, revokes it. The status goes first, preconditioned on the version
 * read, and the revocation is preconditioned on the version the status write produced; so a plan that
 * was changed meanwhile is left to the reconcile of its newer version.
 */
export async function reconcileReplayPlan(
  raw: unknown,
  writes: ReconcileWrites,
  now: Date,
): Promise<ReconcileOutcome> {
  const parsed = ReplayPlanSchema.safeParse(raw);
  const name = (raw as { metadata?: { name?: string } })?.metadata?.name ?? "<unnamed>";
  const outcome: ReconcileOutcome = { name, statusWritten: false, revoked: false, stale: false };
  if (!parsed.success) return { ...outcome, skipped: "the object does not match the schema" };
  const plan = parsed.data;
  const rv = plan.metadata.resourceVersion;
  if (!rv) return { ...outcome, skipped: "the object has no resourceVersion" };
  const step = reconcileStep(plan, now);
  outcome.recheckAt = step.recheckAt;
  let version: string | undefined = rv;
  if (step.statusPatch) {
    version = await writes.patchStatus(name, rv, step.statusPatch);
    if (version === undefined) return { ...outcome, stale: true };
    outcome.statusWritten = true;
  }
  if (step.revoke) {
    if ((await writes.revoke(name, version)) === undefined) return { ...outcome, stale: true };
    outcome.revoked = true;
  }
  return outcome;
}
