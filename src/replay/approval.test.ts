import {
  reviewReplayPlanChange,
  stampReplayPlan,
  type ApprovalSettings,
  type PlanAdmission,
} from "./approval";

const now = new Date("2026-12-01T18:00:00.000Z");
const settings: ApprovalSettings = { approvalTtlMs: 3_600_000, twoPerson: false };
const twoPerson: ApprovalSettings = { ...settings, twoPerson: true };

const spec = {
  planId: "p1",
  part: { index: 0, count: 1 },
  digest: `sha256:${"a".repeat(64)}`,
  source: { cluster: "src~u1" },
  target: { cluster: "dst~u2", namespaces: ["replay-a"] },
  objects: [{ apiVersion: "v1", kind: "ConfigMap", namespace: "replay-a", name: "app" }],
};

function plan(extra: Record<string, unknown> = {}, labels = { "krply.dev/plan-id": "p1" }) {
  return { metadata: { name: "p1", labels }, spec: { ...spec, ...extra } };
}

/** Runs the request through the Mutate rules and then the Validate rules, as the API server does. */
function admit(req: PlanAdmission, s = settings, at = now) {
  const stamp = stampReplayPlan(req, s, at);
  const object = {
    ...(req.object as object),
    metadata: { name: "p1", labels: stamp.labels },
    spec: stamp.spec,
  };
  return { object, review: reviewReplayPlanChange({ ...req, object }, s, at) };
}

const created = admit({
  operation: "CREATE",
  user: "carol",
  object: plan({ approved: false }),
}).object;

describe("stampReplayPlan", () => {
  it("stamps the creator and the plan-id label at create, whatever the client sent for them", () => {
    const { spec: s, labels } = stampReplayPlan(
      { operation: "CREATE", user: "carol", object: plan({}, {} as never) },
      settings,
      now,
    );
    expect(s.createdBy).toBe("carol");
    expect(labels).toEqual({ "krply.dev/plan-id": "p1" });
  });

  it("stamps a new approval with the approving user, now, and now plus the TTL", () => {
    const { spec: s } = stampReplayPlan(
      {
        operation: "UPDATE",
        user: "alice",
        object: { ...created, spec: { ...created.spec, approved: true } },
        oldObject: created,
      },
      settings,
      now,
    );
    expect(s).toMatchObject({
      createdBy: "carol",
      approved: true,
      approvedBy: "alice",
      approvedAt: "2026-12-01T18:00:00.000Z",
      approvalExpiresAt: "2026-12-01T19:00:00.000Z",
    });
  });

  it("keeps the stamps of a standing approval and clears them on revocation", () => {
    const approved = admit({
      operation: "UPDATE",
      user: "alice",
      object: { ...created, spec: { ...created.spec, approved: true } },
      oldObject: created,
    }).object;
    const stale = { ...approved, spec: { ...created.spec, approved: true } };
    const later = new Date(now.getTime() + 60_000);
    expect(
      stampReplayPlan(
        { operation: "UPDATE", user: "bob", object: stale, oldObject: approved },
        settings,
        later,
      ).spec,
    ).toEqual(approved.spec);
    const revoked = stampReplayPlan(
      {
        operation: "UPDATE",
        user: "bob",
        object: { ...approved, spec: { ...approved.spec, approved: false } },
        oldObject: approved,
      },
      settings,
      later,
    ).spec;
    expect(revoked.approved).toBe(false);
    expect(revoked).not.toHaveProperty("approvedBy");
    expect(revoked).not.toHaveProperty("approvedAt");
    expect(revoked).not.toHaveProperty("approvalExpiresAt");
  });

  it("leaves a client's differing approvedBy in place for the Validate binding to refuse", () => {
    const { spec: s } = stampReplayPlan(
      {
        operation: "UPDATE",
        user: "mallory",
        object: { ...created, spec: { ...created.spec, approved: true, approvedBy: "alice" } },
        oldObject: created,
      },
      settings,
      now,
    );
    expect(s.approvedBy).toBe("alice");
  });
});

describe("reviewReplayPlanChange", () => {
  const approve = (user: string, extra: Record<string, unknown> = {}, s = settings) =>
    admit(
      {
        operation: "UPDATE",
        user,
        object: { ...created, spec: { ...created.spec, approved: true, ...extra } },
        oldObject: created,
      },
      s,
    );

  it("admits a plan created by anyone, stamped with its creator", () => {
    expect(admit({ operation: "CREATE", user: "carol", object: plan() }).review).toEqual({
      allowed: true,
      message: "the plan is not approved",
    });
  });

  it("refuses a self-declared creator", () => {
    const r = admit({
      operation: "CREATE",
      user: "carol",
      object: plan({ createdBy: "alice" }),
    }).review;
    expect(r.allowed).toBe(false);
    expect(r.message).toContain(
      'spec.createdBy is stamped from the requesting user: it must be "carol", not "alice"',
    );
  });

  it("admits an approval and names the approver", () => {
    expect(approve("alice").review).toEqual({ allowed: true, message: "alice approved the plan" });
  });

  it("refuses a client-supplied approvedBy that differs from the approving user", () => {
    const r = approve("mallory", { approvedBy: "alice" }).review;
    expect(r.allowed).toBe(false);
    expect(r.message).toBe(
      'krply denied UPDATE of ReplayPlan p1 by mallory: spec.approvedBy is stamped from the approving user: "mallory" cannot approve as "alice"',
    );
  });

  it("accepts a client-supplied approvedBy that names the approving user", () => {
    expect(approve("alice", { approvedBy: "alice" }).review.allowed).toBe(true);
  });

  it("refuses an approval that also changes the plan", () => {
    const r = approve("alice", { objects: [] }).review;
    expect(r.message).toContain("an approval must change nothing but spec.approved");
  });

  it("refuses any change to an approved plan except revoking", () => {
    const approved = approve("alice").object;
    const edit = (user: string, changes: Record<string, unknown>) =>
      admit({
        operation: "UPDATE",
        user,
        object: { ...approved, spec: { ...approved.spec, ...changes } },
        oldObject: approved,
      }).review;
    expect(edit("alice", { objects: [] }).message).toContain(
      "the plan is approved; the only change allowed is revoking the approval",
    );
    expect(edit("bob", { approvedBy: "bob" }).message).toContain("only change allowed is revoking");
    expect(edit("bob", { approvalExpiresAt: "2099-01-01T00:00:00Z" }).allowed).toBe(false);
    expect(edit("bob", { approved: false })).toEqual({
      allowed: true,
      message: "bob revoked the approval",
    });
    expect(edit("bob", { approved: false, objects: [] }).message).toContain(
      "revoking an approval must change nothing else",
    );
    expect(edit("bob", {}).allowed).toBe(true);
  });

  it("enforces the two-person rule when configured", () => {
    expect(approve("carol", {}, twoPerson).review.message).toContain(
      "two-person rule: carol created this plan and cannot also approve it",
    );
    expect(approve("alice", {}, twoPerson).review.allowed).toBe(true);
    expect(approve("carol").review.allowed).toBe(true);
    const atCreate = admit(
      { operation: "CREATE", user: "carol", object: plan({ approved: true }) },
      twoPerson,
    ).review;
    expect(atCreate.message).toContain("two-person rule");
  });

  it("refuses approval times that krply's webhook did not stamp", () => {
    const approved = approve("alice").object;
    const forged = { ...approved.spec, approvalExpiresAt: "2099-01-01T00:00:00.000Z" };
    const r = reviewReplayPlanChange(
      {
        operation: "UPDATE",
        user: "alice",
        object: { ...approved, spec: forged },
        oldObject: created,
      },
      settings,
      now,
    );
    expect(r.message).toContain("stamped by krply's admission webhook");
  });

  it("refuses stamps without an approval, a changed creator, planId or plan-id label", () => {
    const unstamped = { ...created, spec: { ...created.spec, approvedBy: "alice" } };
    expect(
      reviewReplayPlanChange(
        { operation: "UPDATE", user: "alice", object: unstamped, oldObject: created },
        settings,
        now,
      ).message,
    ).toContain("spec.approvedBy is set but the plan is not approved");
    const update = (object: unknown) =>
      reviewReplayPlanChange(
        { operation: "UPDATE", user: "alice", object, oldObject: created },
        settings,
        now,
      );
    expect(update({ ...created, spec: { ...created.spec, createdBy: "alice" } }).message).toContain(
      'spec.createdBy cannot change (it is "carol")',
    );
    expect(
      update({
        metadata: { labels: { "krply.dev/plan-id": "p2" } },
        spec: { ...created.spec, planId: "p2" },
      }).message,
    ).toContain('spec.planId cannot change (it is "p1")');
    expect(update({ ...created, metadata: { labels: {} } }).message).toContain(
      'label krply.dev/plan-id must equal spec.planId "p1"',
    );
  });
});
