import {
  approvalView,
  listOf,
  parseNamespaceMap,
  planRows,
  planStage,
  verdictCounts,
  type ApplyRun,
  type DryRun,
  type Plan,
} from "./replay-model";

const ref = (kind: string, name: string) => ({
  group: "",
  version: "v1",
  kind,
  resource: `${kind.toLowerCase()}s`,
  namespace: "r",
  name,
});
const plan: Plan = {
  id: "rp-1",
  digest: "sha256:aa",
  createdAt: "2024-01-01T00:00:00Z",
  source: { clusterId: "c1", at: "t", snapshotId: null, namespaces: ["shop"] },
  target: { clusterId: "c2", isSource: false },
  namespaceMap: { shop: "r" },
  policy: {},
  coverageComplete: true,
  objects: ["a", "b", "c"].map((n, i) => ({
    ref: ref("ConfigMap", n),
    source: { namespace: "shop", name: n, resourceVersion: String(i) },
    rank: 1,
    warnings: [],
  })),
  excluded: [],
  warnings: [],
};
const dry = (over: Partial<DryRun> = {}): DryRun => ({
  planId: "rp-1",
  digest: "sha256:aa",
  at: "t1",
  ok: true,
  counts: {},
  verdicts: [
    { ref: ref("ConfigMap", "a"), verdict: "would-create", preflight: [] },
    { ref: ref("ConfigMap", "b"), verdict: "conflict", preflight: [] },
  ],
  ...over,
});
const run = (over: Partial<ApplyRun>): ApplyRun => ({
  runId: "run-1",
  digest: "sha256:aa",
  startedAt: "t2",
  finishedAt: "t3",
  ok: true,
  applied: 3,
  notApplied: 0,
  items: [],
  ...over,
});

describe("replay review", () => {
  it("joins each object with its verdict and counts the verdicts, objects without one included", () => {
    const rows = planRows(plan, dry());
    expect(rows.map(r => r.verdict?.verdict ?? null)).toEqual(["would-create", "conflict", null]);
    expect(verdictCounts(rows)).toEqual([
      ["would-create", 1],
      ["conflict", 1],
      ["no verdict", 1],
    ]);
  });

  it("ignores a dry run of another digest and calls it stale; apply needs an ok one", () => {
    const stale = dry({ digest: "sha256:bb" });
    expect(planRows(plan, stale).every(r => r.verdict === null)).toBe(true);
    expect(planStage(plan, stale, [])).toEqual({ dryRun: "stale", lastRun: null, canApply: false });
    expect(planStage(plan, null, []).dryRun).toBe("none");
    expect(planStage(plan, dry({ ok: false }), []).canApply).toBe(false);
    expect(planStage(plan, dry(), []).canApply).toBe(true);
  });

  it("reads approval from the cluster when it can", () => {
    const stage = planStage(plan, dry(), []);
    const part = {
      name: "rp-1",
      approved: true,
      expired: false,
      approvedBy: "alice",
      approvalExpiresAt: "t9",
    };
    expect(
      approvalView(plan, stage, null, { approved: true, problem: null, parts: [part] }, null),
    ).toEqual({
      state: "approved",
      text: "approved by alice, until t9",
    });
    expect(
      approvalView(
        plan,
        stage,
        null,
        { approved: false, problem: "ReplayPlan rp-1 is not approved", parts: [] },
        null,
      ),
    ).toEqual({ state: "pending", text: "not approved: ReplayPlan rp-1 is not approved" });
  });

  it("else says what the journal shows: proven by an apply, refused with the reason, or unknown", () => {
    const applied = planStage(plan, dry(), [
      run({ startedAt: "t1", ok: false }),
      run({ runId: "run-2" }),
    ]);
    expect(applied.lastRun?.runId).toBe("run-2");
    expect(approvalView(plan, applied, null, null, null).state).toBe("applied");
    const none = planStage(plan, dry(), []);
    expect(approvalView(plan, none, "ReplayPlan rp-1 is not approved", null, null)).toEqual({
      state: "refused",
      text: "not approved: ReplayPlan rp-1 is not approved",
    });
    const unknown = approvalView(plan, none, null, null, "cannot reach the target cluster");
    expect(unknown.state).toBe("unknown");
    expect(unknown.text).toContain(
      "the cluster could not be read: cannot reach the target cluster",
    );
    expect(unknown.text).toContain("spec.approved on ReplayPlan rp-1");
  });

  it("parses namespace maps and lists strictly", () => {
    expect(parseNamespaceMap(" shop=restore, a=b ,")).toEqual({ shop: "restore", a: "b" });
    expect(parseNamespaceMap("")).toEqual({});
    expect(() => parseNamespaceMap("shop")).toThrow('"shop" is not source=target');
    expect(listOf("shop, web,,")).toEqual(["shop", "web"]);
  });
});
