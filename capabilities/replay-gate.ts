import { Capability, a, type PeprValidateRequest } from "pepr";
import { PLAN_LABEL, gateRequestOf, processReplay } from "../src/replay";

export const ReplayGate = new Capability({
  name: "replay-gate",
  description: "Admits only writes that belong to an approved krply replay plan (fails closed).",
});

const { When } = ReplayGate;

async function gate(req: PeprValidateRequest<a.GenericKind>) {
  const decision = await processReplay().gate(gateRequestOf(req.Request));
  return decision.allowed ? req.Approve() : req.Deny(decision.message);
}

// Pepr takes one group per binding for both the webhook rule and its own request filter. An empty
// group (and kind) filters nothing, so this binding sees labelled writes of every group and kind; its
// rule alone would send only the core group, though.
When(a.GenericKind, { group: "", version: "", kind: "", plural: "*" })
  .IsCreatedOrUpdated()
  .WithLabel(PLAN_LABEL)
  .Validate(gate);

// This binding exists for its webhook rule (apiGroups ["*"], resources ["*"]), which sends every
// group to the webhook. Pepr's filter compares the group "*" literally, so it never runs; the binding
// above decides. The chart narrows the webhook to objects labelled krply.dev/plan (D5).
When(a.GenericKind, { group: "*", version: "*", kind: "", plural: "*" })
  .IsCreatedOrUpdated()
  .WithLabel(PLAN_LABEL)
  .Validate(gate);
