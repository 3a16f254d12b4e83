import { Capability, a, type PeprValidateRequest } from "pepr";
import { gateGroupsOf } from "../src/config";
import { PLAN_LABEL, gateBindingGroups, gateRequestOf, processReplay } from "../src/replay";

export const ReplayGate = new Capability({
  name: "replay-gate",
  description: "Admits only writes that belong to an approved krply replay plan (fails closed).",
});

const { When } = ReplayGate;

async function gate(req: PeprValidateRequest<a.GenericKind>) {
  const decision = await processReplay().gate(gateRequestOf(req.Request));
  return decision.allowed ? req.Approve() : req.Deny(decision.message);
}

// One label-filtered Validate per group from gateBindingGroups: Pepr takes a binding's group both for
// its webhook rule and for its own request filter, and that function says how the two combine.
for (const group of gateBindingGroups(gateGroupsOf(process.env))) {
  When(a.GenericKind, { group, version: group === "*" ? "*" : "", kind: "", plural: "*" })
    .IsCreatedOrUpdated()
    .WithLabel(PLAN_LABEL)
    .Validate(gate);
}
