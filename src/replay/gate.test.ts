import { decideReplayWrite, noPlans, type ApprovedPlan, type GateRequest } from "./gate";

const base: GateRequest = {
  operation: "CREATE",
  kind: "ConfigMap",
  group: "",
  namespace: "replay-a",
  name: "app",
  labels: { "krply.dev/plan": "p1" },
  fieldManager: "krply-plan-p1",
};

const plan: ApprovedPlan = {
  id: "p1",
  approved: true,
  targetNamespaces: ["replay-a"],
  objects: [{ group: "", kind: "ConfigMap", namespace: "replay-a", name: "app" }],
};

describe("decideReplayWrite", () => {
  it("lets unlabelled writes through untouched", () => {
    expect(decideReplayWrite({ ...base, labels: {} }, noPlans).allowed).toBe(true);
  });

  it("fails closed when no plan store can vouch for the write", () => {
    const d = decideReplayWrite(base, noPlans);
    expect(d.allowed).toBe(false);
    expect(d.message).toContain("no approved replay plan");
  });

  it("denies an empty plan label", () => {
    expect(
      decideReplayWrite({ ...base, labels: { "krply.dev/plan": "" } }, noPlans).message,
    ).toContain("label is empty");
  });

  it("approves only a member object of an approved plan with the plan's field manager", () => {
    const lookup = (id: string) => (id === "p1" ? plan : undefined);
    expect(decideReplayWrite(base, lookup).allowed).toBe(true);
    expect(decideReplayWrite(base, () => ({ ...plan, approved: false })).message).toContain(
      "not been approved",
    );
    expect(decideReplayWrite({ ...base, fieldManager: "kubectl" }, lookup).message).toContain(
      "field manager must be krply-plan-p1",
    );
    expect(decideReplayWrite({ ...base, namespace: "prod" }, lookup).message).toContain(
      "not a target",
    );
    expect(decideReplayWrite({ ...base, name: "other" }, lookup).message).toContain(
      "not part of the plan",
    );
  });
});
