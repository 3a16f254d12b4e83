import { z } from "zod";

/**
 * The ReplayPlan custom resource (deploy/crds/replayplan.yaml): the part of a replay plan that the
 * cluster governs. The planner writes spec (minus the stamped fields), krply's admission webhook stamps
 * createdBy and the approval, the dry run and apply write status.dryRun and status.apply, and the
 * watcher writes the rest of status.
 */
export const REPLAY_PLAN_GROUP = "krply.dev";
export const REPLAY_PLAN_VERSION = "v1alpha1";
export const REPLAY_PLAN_API_VERSION = `${REPLAY_PLAN_GROUP}/${REPLAY_PLAN_VERSION}`;
export const REPLAY_PLAN_KIND = "ReplayPlan";
export const REPLAY_PLAN_PLURAL = "replayplans";
/** Cluster-scoped, so the gate finds a plan by id without knowing a namespace. */
export const REPLAY_PLANS_PATH = `/apis/${REPLAY_PLAN_API_VERSION}/${REPLAY_PLAN_PLURAL}`;

/** Label on every object a plan applies; its value is the plan id. */
export const PLAN_LABEL = "krply.dev/plan";
/**
 * Label on each ReplayPlan part, set from spec.planId. It differs from PLAN_LABEL so the gate's
 * objectSelector (krply.dev/plan) never selects the plans themselves.
 */
export const PLAN_ID_LABEL = "krply.dev/plan-id";
/** Objects are applied with the field manager `krply-plan-<id>`. */
export const FIELD_MANAGER_PREFIX = "krply-plan-";

/**
 * Object refs per ReplayPlan. A ref is about 150 bytes, so a part stays near 75 KB: far below etcd's
 * 1.5 MB object limit and small enough to pass through admission webhooks quickly.
 */
export const MAX_REFS_PER_PART = 500;
/** A plan id is a DNS label short enough that `krply-plan-<id>` and `<id>-<index>` stay valid names. */
export const MAX_PLAN_ID_LENGTH = 40;

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export const PlanIdSchema = z
  .string()
  .min(1)
  .max(MAX_PLAN_ID_LENGTH)
  .regex(DNS_LABEL, "must be a DNS label (lowercase letters, digits and '-')");

/** One object of the plan. apiVersion carries the group; the gate compares group, kind, namespace, name. */
export const ObjectRefSchema = z.object({
  apiVersion: z.string().min(1),
  kind: z.string().min(1),
  /** Absent or empty for a cluster-scoped object. */
  namespace: z.string().optional(),
  name: z.string().min(1),
});
export type ObjectRef = z.infer<typeof ObjectRefSchema>;

/** The group of an apiVersion: "" for the core group ("v1"), "apps" for "apps/v1". */
export function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf("/");
  return slash < 0 ? "" : apiVersion.slice(0, slash);
}

export const ReplayPlanSpecSchema = z.object({
  planId: PlanIdSchema,
  part: z.object({
    index: z.number().int().min(0),
    count: z.number().int().min(1).max(1000),
  }),
  digest: z.string().regex(/^sha256:[0-9a-f]{64}$/, "must be sha256:<64 hex digits>"),
  source: z.object({
    /** Cluster id of the recorded cluster: "<host>~<kube-system uid>". */
    cluster: z.string().min(1),
    namespaces: z.array(z.string()).optional(),
    /** The moment rebuilt (RFC 3339), when the plan rebuilds a time. */
    at: z.string().optional(),
    /** The snapshot rebuilt, when the plan rebuilds a snapshot. */
    snapshot: z.string().optional(),
  }),
  target: z.object({
    /** Cluster id of the cluster written to: "<host>~<kube-system uid>". */
    cluster: z.string().min(1),
    namespaces: z.array(z.string().regex(DNS_LABEL).max(63)).min(1).max(100),
  }),
  objects: z.array(ObjectRefSchema).max(MAX_REFS_PER_PART),
  /** Stamped at create from the request's user. */
  createdBy: z.string().optional(),
  approved: z.boolean().optional(),
  /** Stamped from the approving request's user. */
  approvedBy: z.string().optional(),
  approvedAt: z.string().optional(),
  approvalExpiresAt: z.string().optional(),
});
export type ReplayPlanSpec = z.infer<typeof ReplayPlanSpecSchema>;

export const REPLAY_PLAN_STATES = [
  "planned",
  "dry-run-ok",
  "failed",
  "approved",
  "applied",
  "expired",
] as const;
export type ReplayPlanState = (typeof REPLAY_PLAN_STATES)[number];

/** Verdict counts of one dry run; the names follow the per-object verdicts. */
export const VerdictCountsSchema = z.object({
  wouldCreate: z.number().int().min(0).optional(),
  wouldChange: z.number().int().min(0).optional(),
  unchanged: z.number().int().min(0).optional(),
  conflict: z.number().int().min(0).optional(),
  rejected: z.number().int().min(0).optional(),
  error: z.number().int().min(0).optional(),
});
export type VerdictCounts = z.infer<typeof VerdictCountsSchema>;

/** What the dry run writes into status.dryRun (a merge patch on the status subresource). */
export const DryRunStatusSchema = z.object({
  digest: z.string(),
  at: z.string().optional(),
  ok: z.boolean(),
  verdicts: VerdictCountsSchema.optional(),
});
export type DryRunStatus = z.infer<typeof DryRunStatusSchema>;

/** What apply writes into status.apply (a merge patch on the status subresource). */
export const ApplyStatusSchema = z.object({
  digest: z.string(),
  at: z.string().optional(),
  ok: z.boolean(),
  applied: z.number().int().min(0).optional(),
  notApplied: z.number().int().min(0).optional(),
  message: z.string().optional(),
});
export type ApplyStatus = z.infer<typeof ApplyStatusSchema>;

export const ReplayPlanCountsSchema = VerdictCountsSchema.extend({
  objects: z.number().int().min(0).optional(),
  applied: z.number().int().min(0).optional(),
  notApplied: z.number().int().min(0).optional(),
});
export type ReplayPlanCounts = z.infer<typeof ReplayPlanCountsSchema>;

export const ReplayPlanStatusSchema = z.object({
  state: z.enum(REPLAY_PLAN_STATES).optional(),
  message: z.string().optional(),
  part: z.string().optional(),
  target: z.string().optional(),
  observedGeneration: z.number().int().optional(),
  counts: ReplayPlanCountsSchema.optional(),
  dryRun: DryRunStatusSchema.optional(),
  apply: ApplyStatusSchema.optional(),
  expiredApproval: z
    .object({
      approvedBy: z.string().optional(),
      approvedAt: z.string().optional(),
      expiredAt: z.string().optional(),
    })
    .optional(),
});
export type ReplayPlanStatus = z.infer<typeof ReplayPlanStatusSchema>;

/** A ReplayPlan as read from the API server; unknown metadata fields pass through. */
export const ReplayPlanSchema = z.object({
  apiVersion: z.literal(REPLAY_PLAN_API_VERSION).optional(),
  kind: z.literal(REPLAY_PLAN_KIND).optional(),
  metadata: z.looseObject({
    name: z.string().optional(),
    uid: z.string().optional(),
    resourceVersion: z.string().optional(),
    generation: z.number().optional(),
    creationTimestamp: z.string().optional(),
    labels: z.record(z.string(), z.string()).optional(),
  }),
  spec: ReplayPlanSpecSchema,
  status: ReplayPlanStatusSchema.optional(),
});
export type ReplayPlan = z.infer<typeof ReplayPlanSchema>;

/** The name of one part: the plan id alone when there is one part, `<planId>-<index>` otherwise. */
export function partName(planId: string, index: number, count: number): string {
  return count === 1 ? planId : `${planId}-${index}`;
}

/** What the planner knows about a plan; the parts are derived from it. */
export interface ReplayPlanInput {
  planId: string;
  digest: string;
  source: ReplayPlanSpec["source"];
  target: ReplayPlanSpec["target"];
  /** Every object of the plan, in apply order. */
  objects: ObjectRef[];
}

/**
 * The ReplayPlan manifests of a plan: one per MAX_REFS_PER_PART refs (at least one, so an empty plan
 * is still approvable and visible). Every part has the same planId and digest; approval is per part,
 * and the gate admits a write only when every part of the plan is present and approved.
 */
export function replayPlanParts(input: ReplayPlanInput): ReplayPlan[] {
  PlanIdSchema.parse(input.planId);
  const count = Math.max(1, Math.ceil(input.objects.length / MAX_REFS_PER_PART));
  const parts: ReplayPlan[] = [];
  for (let index = 0; index < count; index++) {
    const objects = input.objects.slice(index * MAX_REFS_PER_PART, (index + 1) * MAX_REFS_PER_PART);
    parts.push({
      apiVersion: REPLAY_PLAN_API_VERSION,
      kind: REPLAY_PLAN_KIND,
      metadata: {
        name: partName(input.planId, index, count),
        labels: { [PLAN_ID_LABEL]: input.planId },
      },
      spec: ReplayPlanSpecSchema.parse({
        planId: input.planId,
        part: { index, count },
        digest: input.digest,
        source: input.source,
        target: input.target,
        objects,
        approved: false,
      }),
    });
  }
  return parts;
}

/** The field manager a plan's writes must use. */
export function fieldManagerOf(planId: string): string {
  return `${FIELD_MANAGER_PREFIX}${planId}`;
}
