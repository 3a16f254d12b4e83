import { z } from "zod";
import {
  PLAN_LABEL,
  fieldManagerOf,
  groupOf,
  type ObjectRef,
  type ReplayPlan,
} from "./replay-plan-cr";

/** What the gate needs to know about one admission request. */
export const GateRequestSchema = z.object({
  operation: z.string(),
  kind: z.string(),
  group: z.string(),
  namespace: z.string(),
  name: z.string(),
  labels: z.record(z.string(), z.string()),
  /** options.fieldManager of the Create/Update/PatchOptions the API server passes on. */
  fieldManager: z.string().optional(),
  dryRun: z.boolean().optional(),
});
export type GateRequest = z.infer<typeof GateRequestSchema>;

/** Every part of a plan, as read from the API server; empty when no ReplayPlan has the id. */
export type PlanLookup = (planId: string) => Promise<ReplayPlan[]>;

export interface GateDecision {
  allowed: boolean;
  message: string;
}

/** What the decision compares against besides the plan. */
export interface GateContext {
  now: Date;
  /** The kube-system namespace uid of the cluster the gate runs in. */
  clusterUid: string;
}

const what = (req: GateRequest): string =>
  `${req.kind} ${req.namespace ? `${req.namespace}/` : ""}${req.name}`;

function denier(req: GateRequest, planId: string) {
  return (why: string): GateDecision => ({
    allowed: false,
    message: `krply replay gate denied ${req.operation} of ${what(req)} (plan ${planId || "<empty>"}): ${why}`,
  });
}

/** The kube-system uid inside a cluster id "<host>~<uid>"; the host differs inside and outside the cluster. */
export function clusterUidOf(clusterId: string): string {
  const tilde = clusterId.lastIndexOf("~");
  return tilde < 0 ? clusterId : clusterId.slice(tilde + 1);
}

function isMember(ref: ObjectRef, req: GateRequest): boolean {
  return (
    groupOf(ref.apiVersion) === req.group &&
    ref.kind === req.kind &&
    (ref.namespace ?? "") === req.namespace &&
    ref.name === req.name
  );
}

/** Why the parts do not form one whole plan, or undefined when they do. */
function incompleteness(parts: readonly ReplayPlan[]): string | undefined {
  const count = parts[0].spec.part.count;
  const digest = parts[0].spec.digest;
  if (parts.some(p => p.spec.part.count !== count))
    return "its parts disagree on how many there are";
  if (parts.some(p => p.spec.digest !== digest)) return "its parts carry different digests";
  const have = new Set(parts.map(p => p.spec.part.index));
  const missing = Array.from({ length: count }, (_, i) => i).filter(i => !have.has(i));
  if (missing.length > 0 || parts.length !== count) {
    return `it has ${parts.length} of its ${count} parts (missing index ${missing.join(", ") || "none"})`;
  }
  return undefined;
}

/**
 * Decides one labelled write against the plan's parts. Pure: the plan was read by the caller. Anything
 * not provably approved is denied, and the message names the first rule that failed:
 * plan exists and is whole, approved, not expired, for this cluster; field manager; target namespace;
 * membership (group, kind, namespace, name).
 */
export function decideReplayWrite(
  req: GateRequest,
  parts: readonly ReplayPlan[],
  ctx: GateContext,
): GateDecision {
  const planId = req.labels[PLAN_LABEL];
  if (planId === undefined) return { allowed: true, message: `${what(req)} is not a replay write` };
  const deny = denier(req, planId);
  if (!planId) return deny(`the ${PLAN_LABEL} label is empty`);
  const own = parts.filter(p => p.spec.planId === planId);
  if (own.length === 0) return deny(`no ReplayPlan with id ${planId} exists`);
  const broken = incompleteness(own);
  if (broken) return deny(`the plan is incomplete: ${broken}`);
  const unapproved = own.filter(p => p.spec.approved !== true);
  if (unapproved.length > 0) {
    const which = own.length === 1 ? "the plan" : `part ${unapproved[0].spec.part.index}`;
    return deny(`${which} has not been approved`);
  }
  for (const p of own) {
    const expires = Date.parse(p.spec.approvalExpiresAt ?? "");
    if (Number.isNaN(expires)) return deny("the approval carries no expiry stamp");
    if (ctx.now.getTime() >= expires) {
      return deny(
        `the approval by ${p.spec.approvedBy ?? "<unknown>"} expired at ${p.spec.approvalExpiresAt}`,
      );
    }
  }
  const target = own[0].spec.target;
  if (clusterUidOf(target.cluster) !== ctx.clusterUid) {
    return deny(
      `the plan targets cluster ${target.cluster}, not this one (kube-system uid ${ctx.clusterUid})`,
    );
  }
  const expectedManager = fieldManagerOf(planId);
  if (req.fieldManager !== expectedManager) {
    return deny(
      `the field manager must be ${expectedManager}, got ${req.fieldManager || "<none>"}`,
    );
  }
  const namespaces = target.namespaces;
  if (req.namespace && !namespaces.includes(req.namespace)) {
    return deny(
      `namespace ${req.namespace} is not a target of the plan (targets: ${namespaces.join(", ")})`,
    );
  }
  if (
    !req.namespace &&
    req.group === "" &&
    req.kind === "Namespace" &&
    !namespaces.includes(req.name)
  ) {
    return deny(
      `namespace ${req.name} is not a target of the plan (targets: ${namespaces.join(", ")})`,
    );
  }
  if (!own.some(p => p.spec.objects.some(ref => isMember(ref, req)))) {
    const group = req.group ? ` (group ${req.group})` : "";
    return deny(`${what(req)}${group} is not in the plan`);
  }
  return { allowed: true, message: `${what(req)} belongs to approved plan ${planId}` };
}

/** What the gate reads from the API server; either may throw, and then the gate denies. */
export interface GateSources {
  lookup: PlanLookup;
  clusterUid: () => Promise<string>;
  now?: () => Date;
}

/**
 * The gate as the Validate binding runs it: unlabelled writes and dry runs pass without any I/O (a dry
 * run persists nothing, and the planner's dry run comes before approval); everything else is decided
 * against the plan read from the API server, and any failure to read it denies the write.
 */
export async function admitReplayWrite(
  req: GateRequest,
  sources: GateSources,
): Promise<GateDecision> {
  const planId = req.labels[PLAN_LABEL];
  if (planId === undefined) return { allowed: true, message: `${what(req)} is not a replay write` };
  if (req.dryRun) {
    return { allowed: true, message: `${what(req)} is a dry run; it persists nothing` };
  }
  const deny = denier(req, planId);
  if (!planId) return deny(`the ${PLAN_LABEL} label is empty`);
  let parts: ReplayPlan[];
  let clusterUid: string;
  try {
    [parts, clusterUid] = await Promise.all([sources.lookup(planId), sources.clusterUid()]);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    return deny(
      `cannot read ReplayPlan ${planId} from the API server, so the write is refused: ${why}`,
    );
  }
  return decideReplayWrite(req, parts, { now: (sources.now ?? (() => new Date()))(), clusterUid });
}

/**
 * The groups of the gate's Validate bindings for the configured groups (["*"] or names, "" = core).
 * Pepr uses a binding's group for its webhook rule and for its own filter, where "" filters nothing
 * and any other value must equal the request's group. So:
 * - every group: "" decides every request, and "*" adds the rule apiGroups ["*"]; its filter never
 *   matches a real group, so it never runs;
 * - a list: one binding per group, each deciding its own group's requests; the core binding ("")
 *   also runs for the others and reaches the same decision.
 */
export function gateBindingGroups(groups: readonly string[]): string[] {
  if (groups.includes("*")) return ["", "*"];
  return [...new Set(groups)].sort();
}
