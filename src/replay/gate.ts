import { z } from "zod";
import { FIELD_MANAGER_PREFIX, PLAN_LABEL } from "./replay-plan-cr";

/** What the gate needs to know about one admission request. */
export const GateRequestSchema = z.object({
  operation: z.string(),
  kind: z.string(),
  group: z.string(),
  namespace: z.string(),
  name: z.string(),
  labels: z.record(z.string(), z.string()),
  fieldManager: z.string().optional(),
});
export type GateRequest = z.infer<typeof GateRequestSchema>;

/** An approved plan as the gate sees it: which objects it may write, and where. */
export interface ApprovedPlan {
  id: string;
  approved: boolean;
  targetNamespaces: string[];
  objects: { group: string; kind: string; namespace: string; name: string }[];
}

/** Looks up a plan by id; undefined means no such plan exists. */
export type PlanLookup = (planId: string) => ApprovedPlan | undefined;

export interface GateDecision {
  allowed: boolean;
  message: string;
}

/** No plan store exists until the replay planner lands, so every lookup misses and the gate fails closed. */
export const noPlans: PlanLookup = () => undefined;

/** Decides whether a write labelled as a replay write may proceed; anything not provably approved is denied. */
export function decideReplayWrite(req: GateRequest, lookup: PlanLookup): GateDecision {
  const planId = req.labels[PLAN_LABEL];
  const what = `${req.kind} ${req.namespace ? `${req.namespace}/` : ""}${req.name}`;
  if (planId === undefined) {
    return { allowed: true, message: `${what} is not a replay write` };
  }
  const deny = (why: string): GateDecision => ({
    allowed: false,
    message: `krply replay gate denied ${req.operation} of ${what} (plan ${planId || "<empty>"}): ${why}`,
  });
  if (!planId) return deny("the krply.dev/plan label is empty");
  const plan = lookup(planId);
  if (!plan) return deny("no approved replay plan with this id exists");
  if (!plan.approved) return deny("the plan has not been approved");
  const expectedManager = `${FIELD_MANAGER_PREFIX}${plan.id}`;
  if (req.fieldManager !== expectedManager) {
    return deny(`field manager must be ${expectedManager}, got ${req.fieldManager ?? "<none>"}`);
  }
  if (req.namespace && !plan.targetNamespaces.includes(req.namespace)) {
    return deny(`namespace ${req.namespace} is not a target of the plan`);
  }
  const member = plan.objects.some(
    o =>
      o.group === req.group &&
      o.kind === req.kind &&
      o.namespace === req.namespace &&
      o.name === req.name,
  );
  if (!member) return deny("the object is not part of the plan");
  return { allowed: true, message: `${what} belongs to approved plan ${plan.id}` };
}
