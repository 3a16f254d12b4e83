import { Capability, a } from "pepr";
import {
  REPLAY_PLAN_GROUP,
  REPLAY_PLAN_KIND,
  REPLAY_PLAN_PLURAL,
  REPLAY_PLAN_VERSION,
  planAdmissionOf,
  processReplay,
} from "../src/replay";

export const ReplayApproval = new Capability({
  name: "replay-approval",
  description:
    "Stamps ReplayPlan creators and approvers from the API server's userInfo, refuses forged or " +
    "late changes, and keeps each plan's status (state, counts, approval expiry).",
});

const { When } = ReplayApproval;

/** A ReplayPlan as Pepr hands it over; src/replay parses it with zod. */
export class ReplayPlanObject extends a.GenericKind {}

const gvk = {
  group: REPLAY_PLAN_GROUP,
  version: REPLAY_PLAN_VERSION,
  kind: REPLAY_PLAN_KIND,
  plural: REPLAY_PLAN_PLURAL,
};

When(ReplayPlanObject, gvk)
  .IsCreatedOrUpdated()
  .Mutate(req => {
    const stamp = processReplay().stamp(planAdmissionOf(req.Request));
    req.Raw.spec = stamp.spec;
    for (const [key, value] of Object.entries(stamp.labels)) req.SetLabel(key, value);
  });

When(ReplayPlanObject, gvk)
  .IsCreatedOrUpdated()
  .Validate(req => {
    const review = processReplay().review(planAdmissionOf(req.Request));
    return review.allowed ? req.Approve() : req.Deny(review.message);
  });

// Runs in the watcher (and `pepr dev`); PEPR_RECONCILE_STRATEGY=kindNsName orders it per plan.
When(ReplayPlanObject, gvk)
  .IsCreatedOrUpdated()
  .Reconcile(async plan => {
    await processReplay().reconcile(plan);
  });
