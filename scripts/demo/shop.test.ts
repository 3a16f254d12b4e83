import {
  PAUSED_STEPS,
  RECORDED_STEPS,
  RESUMED_STEPS,
  SHOP_NAMESPACE,
  caughtUp,
  lastWrittenRv,
} from "./shop";

describe("the shop workload", () => {
  const all = [...RECORDED_STEPS, ...PAUSED_STEPS, ...RESUMED_STEPS];

  it("writes only inside the shop namespace", () => {
    for (const s of all) expect(s.path).toContain(`/namespaces/${SHOP_NAMESPACE}/`);
  });

  it("covers what the demo promises: scale, re-image, ConfigMap edit, relabel, custom resource", () => {
    const bodies = RECORDED_STEPS.map(s => JSON.stringify(s.body));
    expect(bodies.some(b => b.includes('"replicas":4'))).toBe(true);
    expect(bodies.some(b => b.includes("cart:1.1"))).toBe(true);
    expect(bodies.some(b => b.includes('"currency":"USD"'))).toBe(true);
    expect(bodies.some(b => b.includes('"tier":"edge"'))).toBe(true);
    expect(RECORDED_STEPS.some(s => s.path.includes("/apis/shop.krply.dev/"))).toBe(true);
  });

  it("writes to the ConfigMap while paused, so the gap hides real changes", () => {
    expect(PAUSED_STEPS.every(s => s.resource === "configmaps")).toBe(true);
  });
});

describe("caughtUp", () => {
  const want = lastWrittenRv([
    { resource: "configmaps", rv: "9" },
    { resource: "configmaps", rv: "12" },
    { resource: "deployments", rv: "10" },
  ]);

  it("keeps the highest RV per resource, compared as numbers", () => {
    expect(want).toEqual(
      new Map([
        ["configmaps", 12n],
        ["deployments", 10n],
      ]),
    );
  });

  it("waits for every stream to commit its last RV", () => {
    expect(
      caughtUp(want, [
        { resource: "configmaps", durableRv: "12" },
        { resource: "deployments", durableRv: "9" },
      ]),
    ).toBe(false);
    expect(
      caughtUp(want, [
        { resource: "configmaps", durableRv: "100" },
        { resource: "deployments", durableRv: "10" },
      ]),
    ).toBe(true);
    expect(caughtUp(want, [{ resource: "configmaps", durableRv: "100" }])).toBe(false);
    expect(
      caughtUp(want, [
        { resource: "configmaps", durableRv: null },
        { resource: "deployments", durableRv: "10" },
      ]),
    ).toBe(false);
  });
});
