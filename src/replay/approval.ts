import { isDeepStrictEqual } from "node:util";
import { PLAN_ID_LABEL } from "./replay-plan-cr";

/**
 * Approval of a ReplayPlan is attested by the API server, never declared by a client: krply's Mutate
 * binding stamps createdBy and the approval from the admission request's user, and its Validate binding
 * refuses anything the stamps cannot vouch for. Both work on loosely typed objects because mutating
 * webhooks run before the CRD schema is checked.
 */

/** The stamped approval fields; revoking clears them, and only the webhook writes them. */
export const APPROVAL_FIELDS = [
  "approved",
  "approvedBy",
  "approvedAt",
  "approvalExpiresAt",
] as const;

/** What the approval rules need to know about a ReplayPlan admission request. */
export interface PlanAdmission {
  operation: string;
  /** userInfo.username of the request, as the API server authenticated it. */
  user: string;
  object: unknown;
  oldObject?: unknown;
}

/** Approval settings (from src/config.ts). */
export interface ApprovalSettings {
  approvalTtlMs: number;
  twoPerson: boolean;
}

type Spec = Record<string, unknown>;

function record(v: unknown): Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v)
    ? (v as Record<string, unknown>)
    : {};
}

function specOf(obj: unknown): Spec {
  return record(record(obj).spec);
}

function labelsOf(obj: unknown): Record<string, unknown> {
  return record(record(record(obj).metadata).labels);
}

const isApproved = (spec: Spec): boolean => spec.approved === true;

function withoutApproval(spec: Spec): Spec {
  const rest: Spec = { ...spec };
  for (const f of APPROVAL_FIELDS) delete rest[f];
  return rest;
}

/** What the Mutate binding writes back: the whole spec and the labels to set. */
export interface PlanStamp {
  spec: Spec;
  labels: Record<string, string>;
}

/**
 * The Mutate binding's rules. It fills in what the API server vouches for and leaves a client's
 * differing claim in place, so the Validate binding can refuse it by name instead of hiding it:
 * - createdBy: the creating user at CREATE; kept from the old object after.
 * - a new approval: approvedBy is the approving user; approvedAt is now and approvalExpiresAt is now
 *   plus the TTL, always (times are not identities, so the server's clock simply wins).
 * - an approval that stands: missing stamps are copied from the old object (a PUT from a stale copy).
 * - no approval: the stamps are removed, so a revoked plan shows no approver.
 * - the krply.dev/plan-id label follows spec.planId, which is how the gate finds every part.
 */
export function stampReplayPlan(
  req: PlanAdmission,
  settings: ApprovalSettings,
  now: Date,
): PlanStamp {
  const spec: Spec = { ...specOf(req.object) };
  const old = specOf(req.oldObject);
  const labels: Record<string, string> = {};
  if (typeof spec.planId === "string") labels[PLAN_ID_LABEL] = spec.planId;

  if (req.operation === "CREATE") spec.createdBy ??= req.user;
  else if (spec.createdBy === undefined && old.createdBy !== undefined)
    spec.createdBy = old.createdBy;

  const stands = req.operation !== "CREATE" && isApproved(old);
  if (!isApproved(spec)) {
    for (const f of APPROVAL_FIELDS) if (f !== "approved") delete spec[f];
  } else if (stands) {
    for (const f of APPROVAL_FIELDS) spec[f] ??= old[f];
  } else {
    spec.approvedBy ??= req.user;
    spec.approvedAt = now.toISOString();
    spec.approvalExpiresAt = new Date(now.getTime() + settings.approvalTtlMs).toISOString();
  }
  return { spec, labels };
}

/** The Validate binding's answer; message says exactly what was refused and why. */
export interface PlanReview {
  allowed: boolean;
  message: string;
}

// Stamps made by a webhook replica a moment ago still count as "now".
const CLOCK_SKEW_MS = 5 * 60_000;

const quote = (v: unknown): string => (v === undefined ? "<none>" : JSON.stringify(v));

/**
 * The Validate binding's rules, checked on the object as the Mutate binding left it:
 * - createdBy is the creating user and never changes;
 * - the krply.dev/plan-id label equals spec.planId, and planId never changes;
 * - an approved plan changes only by revoking its approval (spec.approved: false, nothing else);
 * - a new approval changes nothing but the approval, carries the approving user as approvedBy and
 *   server-stamped times within the TTL, and, under the two-person rule, comes from someone other
 *   than the creator;
 * - a plan that is not approved carries no approval stamps.
 */
export function reviewReplayPlanChange(
  req: PlanAdmission,
  settings: ApprovalSettings,
  now: Date,
): PlanReview {
  const spec = specOf(req.object);
  const old = specOf(req.oldObject);
  const name = String(record(record(req.object).metadata).name ?? spec.planId ?? "");
  const deny = (why: string): PlanReview => ({
    allowed: false,
    message: `krply denied ${req.operation} of ReplayPlan ${name} by ${req.user}: ${why}`,
  });
  const creating = req.operation === "CREATE";
  if (!req.user) return deny("the request carries no authenticated user name");

  if (labelsOf(req.object)[PLAN_ID_LABEL] !== spec.planId) {
    return deny(
      `label ${PLAN_ID_LABEL} must equal spec.planId ${quote(spec.planId)}, ` +
        `got ${quote(labelsOf(req.object)[PLAN_ID_LABEL])}`,
    );
  }
  if (creating && spec.createdBy !== req.user) {
    return deny(
      `spec.createdBy is stamped from the requesting user: it must be ${quote(req.user)}, ` +
        `not ${quote(spec.createdBy)}`,
    );
  }
  if (!creating && spec.createdBy !== old.createdBy) {
    return deny(`spec.createdBy cannot change (it is ${quote(old.createdBy)})`);
  }
  if (!creating && spec.planId !== old.planId) {
    return deny(`spec.planId cannot change (it is ${quote(old.planId)})`);
  }

  if (!creating && isApproved(old)) {
    if (isApproved(spec)) {
      if (!isDeepStrictEqual(spec, old)) {
        return deny(
          "the plan is approved; the only change allowed is revoking the approval " +
            "(spec.approved: false)",
        );
      }
      return { allowed: true, message: "the approved plan is unchanged" };
    }
    if (!isDeepStrictEqual(withoutApproval(spec), withoutApproval(old))) {
      return deny("revoking an approval must change nothing else in the plan");
    }
    return { allowed: true, message: `${req.user} revoked the approval` };
  }

  if (!isApproved(spec)) {
    const stamped = APPROVAL_FIELDS.filter(f => f !== "approved" && spec[f] !== undefined);
    if (stamped.length > 0) {
      return deny(`spec.${stamped[0]} is set but the plan is not approved`);
    }
    return { allowed: true, message: "the plan is not approved" };
  }

  // A new approval.
  if (!creating && !isDeepStrictEqual(withoutApproval(spec), withoutApproval(old))) {
    return deny("an approval must change nothing but spec.approved");
  }
  if (spec.approvedBy !== req.user) {
    return deny(
      `spec.approvedBy is stamped from the approving user: ${quote(req.user)} cannot approve ` +
        `as ${quote(spec.approvedBy)}`,
    );
  }
  const at = Date.parse(String(spec.approvedAt));
  const expires = Date.parse(String(spec.approvalExpiresAt));
  if (
    Number.isNaN(at) ||
    Number.isNaN(expires) ||
    Math.abs(at - now.getTime()) > CLOCK_SKEW_MS ||
    expires <= at ||
    expires - at > settings.approvalTtlMs
  ) {
    return deny(
      "spec.approvedAt and spec.approvalExpiresAt are stamped by krply's admission webhook; " +
        `got ${quote(spec.approvedAt)} and ${quote(spec.approvalExpiresAt)}`,
    );
  }
  if (settings.twoPerson && spec.createdBy === req.user) {
    return deny(`two-person rule: ${req.user} created this plan and cannot also approve it`);
  }
  return { allowed: true, message: `${req.user} approved the plan` };
}
