import { approvalOf, planStatus, reconcileStep } from "./plan-status";
import { reconcileReplayPlan, type ReconcileWrites } from "./reconcile";
import { replayPlanParts, type ReplayPlan } from "./replay-plan-cr";

const now = new Date("2026-12-01T18:00:00.000Z");
const digest = `sha256:${"c".repeat(64)}`;
const [base] = replayPlanParts({
  planId: "p1",
  digest,
  source: { cluster: "src~u1" },
  target: { cluster: "dst~u2", namespaces: ["replay-a", "replay-b"] },
  objects: [
    { apiVersion: "v1", kind: "ConfigMap", namespace: "replay-a", name: "a" },
    { apiVersion: "v1", kind: "ConfigMap", namespace: "replay-b", name: "b" },
  ],
});

function with_(spec: Partial<ReplayPlan["spec"]> = {}, status?: ReplayPlan["status"]): ReplayPlan {
  return {
    ...base,
    metadata: { ...base.metadata, resourceVersion: "10", generation: 2 },
    spec: { ...base.spec, ...spec },
    ...(status ? { status } : {}),
  };
}

const approval = {
  approved: true,
  approvedBy: "alice",
  approvedAt: "2026-12-01T17:30:00.000Z",
  approvalExpiresAt: "2026-12-01T18:30:00.000Z",
};
const dryRunOk = {
  dryRun: { digest, ok: true, verdicts: { wouldCreate: 1, wouldChange: 1, conflict: 0 } },
};

describe("planStatus", () => {
  it("is planned before any dry run, with the part, target and object count", () => {
    expect(planStatus(with_(), now)).toEqual({
      state: "planned",
      message: "awaiting a dry run",
      part: "1/1",
      target: "replay-a,replay-b",
      counts: { objects: 2 },
      observedGeneration: 2,
    });
  });

  it("follows the dry run of the current digest only", () => {
    const ok = planStatus(with_({}, dryRunOk), now);
    expect(ok.state).toBe("dry-run-ok");
    expect(ok.counts).toEqual({ objects: 2, wouldCreate: 1, wouldChange: 1, conflict: 0 });
    expect(ok.message).toBe(
      "dry run passed (1 would create, 1 would change, 0 unchanged, 0 conflicts, 0 rejected, 0 errors); awaiting approval",
    );
    const failed = planStatus(
      with_({}, { dryRun: { digest, ok: false, verdicts: { conflict: 1, wouldCreate: 1 } } }),
      now,
    );
    expect(failed.state).toBe("failed");
    expect(failed.message).toContain("1 conflict,");
    const stale = planStatus(
      with_({}, { dryRun: { ...dryRunOk.dryRun, digest: "sha256:old" } }),
      now,
    );
    expect(stale.state).toBe("planned");
    expect(stale.counts).toEqual({ objects: 2 });
  });

  it("is approved until the approval expires, then expired", () => {
    expect(planStatus(with_(approval, dryRunOk), now)).toMatchObject({
      state: "approved",
      message: "approved by alice until 2026-12-01T18:30:00.000Z",
    });
    expect(planStatus(with_(approval), now).message).toContain("no passing dry run");
    const late = new Date("2026-12-01T18:30:00.000Z");
    expect(planStatus(with_(approval), late)).toMatchObject({
      state: "expired",
      message: "the approval by alice expired at 2026-12-01T18:30:00.000Z",
      expiredApproval: {
        approvedBy: "alice",
        approvedAt: "2026-12-01T17:30:00.000Z",
        expiredAt: "2026-12-01T18:30:00.000Z",
      },
    });
  });

  it("stays expired after the revocation until someone approves again", () => {
    const expiredApproval = { approvedBy: "alice", expiredAt: "2026-12-01T18:30:00.000Z" };
    const revoked = planStatus(with_({}, { ...dryRunOk, expiredApproval }), now);
    expect(revoked.state).toBe("expired");
    expect(revoked.message).toContain("approve again to replay");
    const again = planStatus(with_(approval, { ...dryRunOk, expiredApproval }), now);
    expect(again.state).toBe("approved");
    expect(again.expiredApproval).toBeUndefined();
  });

  it("reports apply of the current digest above everything else", () => {
    const applied = planStatus(
      with_(approval, { ...dryRunOk, apply: { digest, ok: true, applied: 2, notApplied: 0 } }),
      now,
    );
    expect(applied).toMatchObject({ state: "applied", message: "applied 2 objects" });
    expect(applied.counts).toMatchObject({ applied: 2, notApplied: 0 });
    const failed = planStatus(
      with_(approval, { apply: { digest, ok: false, applied: 1, notApplied: 1 } }),
      now,
    );
    expect(failed).toMatchObject({
      state: "failed",
      message: "apply stopped: 1 applied, 1 not applied",
    });
  });

  it("treats an approval without an expiry stamp as expired", () => {
    expect(approvalOf(with_({ approved: true }), now)).toEqual({ approved: true, expired: true });
  });
});

describe("reconcileStep", () => {
  it("patches only the owned fields that differ, and nothing when the status is right", () => {
    const plan = with_({}, dryRunOk);
    const first = reconcileStep(plan, now);
    expect(first.statusPatch).toMatchObject({ state: "dry-run-ok", part: "1/1" });
    expect(first.statusPatch).not.toHaveProperty("dryRun");
    const settled = with_({}, { ...dryRunOk, ...planStatus(plan, now) });
    expect(reconcileStep(settled, now)).toEqual({ revoke: false });
  });

  it("removes a stale expiredApproval with null and rechecks at the expiry", () => {
    const plan = with_(approval, { expiredApproval: { approvedBy: "bob" } });
    const step = reconcileStep(plan, now);
    expect(step.statusPatch?.expiredApproval).toBeNull();
    expect(step.recheckAt).toEqual(new Date("2026-12-01T18:30:00.000Z"));
    expect(step.revoke).toBe(false);
  });

  it("revokes an expired approval", () => {
    const step = reconcileStep(with_(approval), new Date("2026-12-01T19:00:00.000Z"));
    expect(step.revoke).toBe(true);
    expect(step.recheckAt).toBeUndefined();
  });
});

describe("reconcileReplayPlan", () => {
  function recorder(stale: { status?: boolean; revoke?: boolean } = {}) {
    const calls: string[] = [];
    const writes: ReconcileWrites = {
      patchStatus: async (name, rv, status) => {
        calls.push(`status ${name}@${rv} ${String(status.state)}`);
        return stale.status ? undefined : "11";
      },
      revoke: async (name, rv) => {
        calls.push(`revoke ${name}@${rv}`);
        return stale.revoke ? undefined : "12";
      },
    };
    return { calls, writes };
  }
  const late = new Date("2026-12-01T19:00:00.000Z");

  it("writes the expired status first, then revokes on the version that write produced", async () => {
    const { calls, writes } = recorder();
    const outcome = await reconcileReplayPlan(with_(approval), writes, late);
    expect(calls).toEqual(["status p1@10 expired", "revoke p1@11"]);
    expect(outcome).toMatchObject({ statusWritten: true, revoked: true, stale: false });
  });

  it("leaves a stale copy to the reconcile of the newer version", async () => {
    const { calls, writes } = recorder({ status: true });
    expect(await reconcileReplayPlan(with_(approval), writes, late)).toMatchObject({
      stale: true,
      revoked: false,
    });
    expect(calls).toEqual(["status p1@10 expired"]);
  });

  it("skips an object that is not a ReplayPlan", async () => {
    const { calls, writes } = recorder();
    expect(
      await reconcileReplayPlan({ metadata: { name: "x" }, spec: {} }, writes, now),
    ).toMatchObject({ skipped: "the object does not match the schema" });
    expect(calls).toEqual([]);
  });
});
