import { Capability, a } from "pepr";
import { decideReplayWrite, noPlans, PLAN_LABEL } from "../src/replay";

export const ReplayGate = new Capability({
  name: "replay-gate",
  description: "Admits only writes that belong to an approved krply replay plan (fails closed).",
});

const { When } = ReplayGate;

// An empty kind matches every kind in Pepr's filter; the chart finalize step narrows the webhook by label.
When(a.GenericKind, { group: "", version: "", kind: "", plural: "*" })
  .IsCreatedOrUpdated()
  .WithLabel(PLAN_LABEL)
  .Validate(req => {
    const raw = req.Raw;
    const decision = decideReplayWrite(
      {
        operation: req.Request.operation,
        kind: req.Request.kind.kind,
        group: req.Request.kind.group,
        namespace: raw.metadata?.namespace ?? req.Request.namespace ?? "",
        name: raw.metadata?.name ?? req.Request.name ?? "",
        labels: raw.metadata?.labels ?? {},
        fieldManager: (req.Request.options as { fieldManager?: string } | undefined)?.fieldManager,
      },
      noPlans,
    );
    return decision.allowed ? req.Approve() : req.Deny(decision.message);
  });
