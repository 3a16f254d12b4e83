import type { KubeClient } from "../kube/client";
import { ApiError } from "../kube/errors";
import { fieldDiff, withoutServerFields } from "../materialize";
import { preflight, targetFacts } from "./preflight";
import { applyPatch, getOrNull, mapBounded, messageOf, objectPath } from "./requests";
import { resolveOwners } from "./owners";
import { VERDICTS, type DryRun, type Plan, type PlanObject, type Verdict } from "./types";

export interface DryRunOptions {
  /** Requests in flight at once. */
  concurrency?: number;
  /** Skip preflight (the benchmark measures the PATCHes alone). */
  skipPreflight?: boolean;
  now?: () => Date;
}

export const DEFAULT_CONCURRENCY = 8;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** FieldManagerConflict causes of a 409, as the server listed them. */
function conflictsOf(err: ApiError): NonNullable<Verdict["conflicts"]> {
  const causes = Array.isArray(err.details?.causes) ? err.details.causes : [];
  return causes
    .filter(c => isRecord(c) && c.reason === "FieldManagerConflict")
    .map(c => {
      const cause = c as Record<string, unknown>;
      const message = String(cause.message ?? "");
      const manager = /conflict with "([^"]*)"/.exec(message)?.[1] ?? "";
      return { manager, field: String(cause.field ?? ""), message };
    });
}

/**
 * Which verdict a failed request earns: a field-manager conflict; a refusal by validation, an
 * admission webhook or a quota (the server looked at the object and said no); or an error (the
 * request never got that far: rights, a missing namespace, the network).
 */
export function verdictOfError(err: unknown): Pick<Verdict, "verdict" | "conflicts" | "message"> {
  if (err instanceof ApiError) {
    const conflicts = conflictsOf(err);
    if (err.status === 409 && conflicts.length > 0)
      return { verdict: "conflict", conflicts, message: err.message };
    const admission =
      /admission webhook|denied the request|exceeded quota|forbidden: (maximum|minimum)/i;
    if (
      err.status === 422 ||
      err.status === 400 ||
      (err.status === 403 && admission.test(err.message))
    )
      return { verdict: "rejected", message: err.message };
    return { verdict: "error", message: err.message };
  }
  return { verdict: "error", message: messageOf(err) };
}

/** would-change or unchanged: the dry-run result against the live object, server fields aside. */
function compare(
  live: Record<string, unknown>,
  after: Record<string, unknown>,
): Pick<Verdict, "verdict" | "changes"> {
  const changes = fieldDiff(withoutServerFields(live), withoutServerFields(after));
  if (changes.length === 0) return { verdict: "unchanged" };
  return {
    verdict: "would-change",
    changes: changes.map(c => ({ path: c.path, before: c.before, after: c.after })),
  };
}

async function dryRunOne(
  client: KubeClient,
  plan: Plan,
  obj: PlanObject,
  preflightFindings: string[],
): Promise<Verdict> {
  const base = { ref: obj.ref, preflight: preflightFindings };
  try {
    const manifest = await resolveOwners(client, plan, obj, "dry-run");
    const res = await applyPatch(client, obj.ref, manifest, plan.fieldManager, true);
    // Server-side apply answers 201 when the object would be created.
    if (res.status === 201) return { ...base, verdict: "would-create" };
    const live = await getOrNull(client, objectPath(obj.ref));
    if (!live) return { ...base, verdict: "would-create" };
    return { ...base, ...compare(live, res.data) };
  } catch (err) {
    if (namespaceCreatedByPlan(err, plan, obj))
      return {
        ...base,
        verdict: "would-create",
        message: `namespace ${obj.ref.namespace} does not exist yet and this plan creates it first, so the server could check this object only when it is applied`,
      };
    return { ...base, ...verdictOfError(err) };
  }
}

/** A 404 for the object's namespace, which the plan itself creates before the object. */
function namespaceCreatedByPlan(err: unknown, plan: Plan, obj: PlanObject): boolean {
  return (
    err instanceof ApiError &&
    err.status === 404 &&
    err.details?.kind === "namespaces" &&
    err.details?.name === obj.ref.namespace &&
    plan.objects.some(
      o => o.ref.kind === "Namespace" && o.ref.group === "" && o.ref.name === obj.ref.namespace,
    )
  );
}

/** Counts of each verdict, zeros included. */
export function countVerdicts(verdicts: readonly Verdict[]): Record<string, number> {
  const counts: Record<string, number> = Object.fromEntries(VERDICTS.map(v => [v, 0]));
  for (const v of verdicts) counts[v.verdict]++;
  return counts;
}

/**
 * Dry-runs every object of a plan against the target: one server-side apply PATCH per object with
 * dryRun=All, the plan's field manager and force=false, at bounded concurrency. The plan is
 * dry-run-ok only when no object has a conflict, a rejection or an error.
 */
export async function dryRunPlan(
  client: KubeClient,
  plan: Plan,
  opts: DryRunOptions = {},
): Promise<DryRun> {
  const now = opts.now ?? (() => new Date());
  // Preflight reads the target while the PATCHes run; its findings join the verdicts at the end.
  const facts = opts.skipPreflight ? null : targetFacts(client, plan);
  const verdicts = await mapBounded(plan.objects, opts.concurrency ?? DEFAULT_CONCURRENCY, o =>
    dryRunOne(client, plan, o, []),
  );
  if (facts) {
    const findings = preflight(plan, await facts);
    verdicts.forEach((v, i) => (v.preflight = findings[i]));
  }
  const counts = countVerdicts(verdicts);
  return {
    planId: plan.id,
    digest: plan.digest,
    at: now().toISOString(),
    ok: counts.conflict === 0 && counts.rejected === 0 && counts.error === 0,
    counts,
    verdicts,
  };
}
