import {
  admitReplayWrite,
  clusterUidOf,
  decideReplayWrite,
  gateBindingGroups,
  type GateContext,
  type GateRequest,
} from "./gate";
import { cachedPlanLookup } from "./plan-cache";
import { replayPlanParts, type ReplayPlan, MAX_REFS_PER_PART } from "./replay-plan-cr";

const now = new Date("2026-12-01T18:00:00.000Z");
const ctx: GateContext = { now, clusterUid: "dst-uid" };

const base: GateRequest = {
  operation: "CREATE",
  kind: "ConfigMap",
  group: "",
  namespace: "replay-a",
  name: "app",
  labels: { "krply.dev/plan": "p1" },
  fieldManager: "krply-plan-p1",
};

function approved(plans: ReplayPlan[], expires = "2026-12-01T19:00:00.000Z"): ReplayPlan[] {
  return plans.map(p => ({
    ...p,
    spec: {
      ...p.spec,
      approved: true,
      approvedBy: "alice",
      approvedAt: "2026-12-01T17:00:00.000Z",
      approvalExpiresAt: expires,
    },
  }));
}

const input = {
  planId: "p1",
  digest: `sha256:${"b".repeat(64)}`,
  source: { cluster: "src:6443~src-uid" },
  target: { cluster: "127.0.0.1:6443~dst-uid", namespaces: ["replay-a"] },
  objects: [
    { apiVersion: "v1", kind: "ConfigMap", namespace: "replay-a", name: "app" },
    { apiVersion: "apps/v1", kind: "Deployment", namespace: "replay-a", name: "web" },
    { apiVersion: "v1", kind: "Namespace", name: "replay-a" },
  ],
};
const plan = approved(replayPlanParts(input));

describe("decideReplayWrite", () => {
  it("lets unlabelled writes through untouched", () => {
    expect(decideReplayWrite({ ...base, labels: {} }, [], ctx).allowed).toBe(true);
  });

  it("admits a member object of an approved plan written by the plan's field manager", () => {
    expect(decideReplayWrite(base, plan, ctx)).toEqual({
      allowed: true,
      message: "ConfigMap replay-a/app belongs to approved plan p1",
    });
  });

  it("covers every API group and cluster-scoped target namespaces", () => {
    const deploy = { ...base, kind: "Deployment", group: "apps", name: "web" };
    expect(decideReplayWrite(deploy, plan, ctx).allowed).toBe(true);
    // A Deployment named like the ConfigMap, or the ConfigMap under another group, is another object.
    expect(decideReplayWrite({ ...deploy, name: "app" }, plan, ctx).allowed).toBe(false);
    expect(decideReplayWrite({ ...base, group: "example.com" }, plan, ctx).message).toContain(
      "ConfigMap replay-a/app (group example.com) is not in the plan",
    );
    const ns = { ...base, kind: "Namespace", namespace: "", name: "replay-a" };
    expect(decideReplayWrite(ns, plan, ctx).allowed).toBe(true);
    expect(decideReplayWrite({ ...ns, name: "prod" }, plan, ctx).message).toContain(
      "namespace prod is not a target of the plan (targets: replay-a)",
    );
  });

  it("denies with a message that names the failed rule", () => {
    const deny = (req: GateRequest, parts: ReplayPlan[], c = ctx) => {
      const d = decideReplayWrite(req, parts, c);
      expect(d.allowed).toBe(false);
      return d.message;
    };
    expect(deny({ ...base, labels: { "krply.dev/plan": "" } }, plan)).toContain("label is empty");
    expect(deny(base, [])).toBe(
      "krply replay gate denied CREATE of ConfigMap replay-a/app (plan p1): no ReplayPlan with id p1 exists",
    );
    expect(deny(base, replayPlanParts(input))).toContain("the plan has not been approved");
    expect(deny(base, approved(replayPlanParts(input), "2026-12-01T18:00:00.000Z"))).toContain(
      "the approval by alice expired at 2026-12-01T18:00:00.000Z",
    );
    expect(deny(base, plan, { ...ctx, clusterUid: "other" })).toContain(
      "the plan targets cluster 127.0.0.1:6443~dst-uid, not this one",
    );
    expect(deny({ ...base, fieldManager: "kubectl" }, plan)).toContain(
      "the field manager must be krply-plan-p1, got kubectl",
    );
    expect(deny({ ...base, fieldManager: undefined }, plan)).toContain("got <none>");
    expect(deny({ ...base, namespace: "prod" }, plan)).toContain(
      "namespace prod is not a target of the plan (targets: replay-a)",
    );
    expect(deny({ ...base, name: "other" }, plan)).toContain(
      "ConfigMap replay-a/other is not in the plan",
    );
    const noExpiry = plan.map(p => ({ ...p, spec: { ...p.spec, approvalExpiresAt: undefined } }));
    expect(deny(base, noExpiry)).toContain("no expiry stamp");
  });

  it("admits a split plan only when every part is present and approved", () => {
    const many = Array.from({ length: MAX_REFS_PER_PART + 1 }, (_, i) => ({
      apiVersion: "v1",
      kind: "ConfigMap",
      namespace: "replay-a",
      name: `cm-${i}`,
    }));
    const parts = approved(replayPlanParts({ ...input, objects: many }));
    const last = { ...base, name: `cm-${MAX_REFS_PER_PART}` };
    expect(decideReplayWrite(last, parts, ctx).allowed).toBe(true);
    expect(decideReplayWrite(last, [parts[1]], ctx).message).toContain(
      "the plan is incomplete: it has 1 of its 2 parts (missing index 0)",
    );
    const half = [parts[0], { ...parts[1], spec: { ...parts[1].spec, approved: false } }];
    expect(decideReplayWrite(base, half, ctx).message).toContain("part 1 has not been approved");
    const mixed = [parts[0], { ...parts[1], spec: { ...parts[1].spec, digest: "sha256:x" } }];
    expect(decideReplayWrite(base, mixed, ctx).message).toContain("different digests");
  });

  it("reads the kube-system uid from a cluster id", () => {
    expect(clusterUidOf("10.0.0.1:443~abc")).toBe("abc");
    expect(clusterUidOf("abc")).toBe("abc");
  });
});

describe("admitReplayWrite", () => {
  const sources = {
    lookup: () => Promise.resolve(plan),
    clusterUid: () => Promise.resolve("dst-uid"),
    now: () => now,
  };

  it("decides against what it read", async () => {
    expect((await admitReplayWrite(base, sources)).allowed).toBe(true);
    expect((await admitReplayWrite({ ...base, name: "x" }, sources)).allowed).toBe(false);
  });

  it("admits unlabelled writes and dry runs without reading anything", async () => {
    const broken = {
      lookup: () => Promise.reject(new Error("must not be called")),
      clusterUid: () => Promise.reject(new Error("must not be called")),
    };
    expect((await admitReplayWrite({ ...base, labels: {} }, broken)).allowed).toBe(true);
    expect(await admitReplayWrite({ ...base, dryRun: true }, broken)).toEqual({
      allowed: true,
      message: "ConfigMap replay-a/app is a dry run; it persists nothing",
    });
  });

  it("fails closed when the plan or the cluster cannot be read", async () => {
    const down = { ...sources, lookup: () => Promise.reject(new Error("connect ECONNREFUSED")) };
    expect(await admitReplayWrite(base, down)).toEqual({
      allowed: false,
      message:
        "krply replay gate denied CREATE of ConfigMap replay-a/app (plan p1): cannot read " +
        "ReplayPlan p1 from the API server, so the write is refused: connect ECONNREFUSED",
    });
    const noUid = { ...sources, clusterUid: () => Promise.reject(new Error("403")) };
    expect((await admitReplayWrite(base, noUid)).allowed).toBe(false);
  });
});

describe("cachedPlanLookup", () => {
  const raw = (approvedNow: boolean) => (approvedNow ? plan : replayPlanParts(input));

  it("reuses a fully approved plan for the TTL and rereads after it", async () => {
    let t = 0;
    const fetch = jest.fn(() => Promise.resolve(raw(true) as unknown[]));
    const lookup = cachedPlanLookup(fetch, { ttlMs: 1000, now: () => t });
    await lookup("p1");
    t = 999;
    await lookup("p1");
    expect(fetch).toHaveBeenCalledTimes(1);
    t = 1000;
    await lookup("p1");
    expect(fetch).toHaveBeenCalledTimes(2);
  });

  it("never caches a plan that is not approved, so a fresh approval counts at once", async () => {
    let approvedNow = false;
    const fetch = jest.fn(() => Promise.resolve(raw(approvedNow) as unknown[]));
    const lookup = cachedPlanLookup(fetch, { ttlMs: 60_000, now: () => 0 });
    expect((await lookup("p1"))[0].spec.approved).toBe(false);
    approvedNow = true;
    expect((await lookup("p1"))[0].spec.approved).toBe(true);
    expect(fetch).toHaveBeenCalledTimes(2);
  });

  it("shares one request among concurrent lookups and rejects a part that breaks the schema", async () => {
    const fetch = jest.fn(() => Promise.resolve(raw(false) as unknown[]));
    const lookup = cachedPlanLookup(fetch, { ttlMs: 1000 });
    await Promise.all([lookup("p1"), lookup("p1"), lookup("p1")]);
    expect(fetch).toHaveBeenCalledTimes(1);
    const bad = cachedPlanLookup(
      () => Promise.resolve([{ metadata: { name: "p1" }, spec: { planId: "P!" } }]),
      { ttlMs: 1000 },
    );
    await expect(bad("p1")).rejects.toThrow(
      "ReplayPlan p1 does not match the krply.dev/v1alpha1 schema",
    );
  });
});

describe("gateBindingGroups", () => {
  it("binds every group with an unfiltered binding plus the rule-only wildcard", () => {
    expect(gateBindingGroups(["*"])).toEqual(["", "*"]);
  });

  it("binds a list with one binding per group", () => {
    expect(gateBindingGroups(["apps", "", "apps"])).toEqual(["", "apps"]);
    expect(gateBindingGroups(["apps"])).toEqual(["apps"]);
  });
});
