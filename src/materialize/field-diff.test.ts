import { fieldDiff, jsonEqual, listKeyFor } from "./field-diff";
import { withoutServerFields } from "./normalize";

const summary = (before: unknown, after: unknown) =>
  fieldDiff(before, after).map(c => ({
    path: c.path,
    before: c.before,
    after: c.after,
    added: c.added,
    removed: c.removed,
  }));

describe("fieldDiff keeps meaning", () => {
  it("an empty egress rule allows all traffic, so adding it is a change", () => {
    const before = { spec: { podSelector: {}, policyTypes: ["Egress"] } };
    const after = { spec: { podSelector: {}, policyTypes: ["Egress"], egress: [{}] } };
    expect(summary(before, after)).toEqual([
      { path: "spec.egress", before: undefined, after: [{}], added: true, removed: false },
    ]);
  });

  it("tells an empty list from a list holding one empty rule", () => {
    expect(summary({ egress: [] }, { egress: [{}] })).toEqual([
      { path: "egress[0]", before: undefined, after: {}, added: true, removed: false },
    ]);
  });

  it("tells {} from absent and from null", () => {
    expect(summary({ v: {} }, { v: null })).toEqual([
      { path: "v", before: {}, after: null, added: false, removed: false },
    ]);
    expect(summary({ emptyDir: {} }, {})).toEqual([
      { path: "emptyDir", before: {}, after: undefined, added: false, removed: true },
    ]);
    expect(fieldDiff({ a: {} }, { a: {} })).toEqual([]);
  });

  it("matches containers, env, ports and volumes by name, not by position", () => {
    const c = (name: string, image: string) => ({ name, image });
    const before = {
      containers: [c("app", "app:1"), c("sidecar", "proxy:1")],
      volumes: [
        { name: "data", emptyDir: {} },
        { name: "cfg", configMap: { name: "x" } },
      ],
    };
    const after = {
      containers: [c("sidecar", "proxy:1"), c("app", "app:2")],
      volumes: [{ name: "cfg", configMap: { name: "x" } }],
    };
    expect(summary(before, after)).toEqual([
      {
        path: "containers[name=app].image",
        before: "app:1",
        after: "app:2",
        added: false,
        removed: false,
      },
      {
        path: "volumes[name=data]",
        before: { name: "data", emptyDir: {} },
        after: undefined,
        added: false,
        removed: true,
      },
    ]);
  });

  it("matches env by name and ports by containerPort when unnamed", () => {
    const before = {
      env: [
        { name: "A", value: "1" },
        { name: "B", value: "2" },
      ],
      ports: [{ containerPort: 80 }, { containerPort: 443 }],
    };
    const after = {
      env: [{ name: "B", value: "3" }],
      ports: [{ containerPort: 443, protocol: "TCP" }, { containerPort: 80 }],
    };
    expect(summary(before, after).map(c => c.path)).toEqual([
      "env[name=A]",
      "env[name=B].value",
      "ports[containerPort=443].protocol",
    ]);
  });

  it("falls back to index when items lack a unique key", () => {
    expect(listKeyFor("containers", [{ name: "a" }], [{ name: "a" }, { name: "a" }])).toBeNull();
    expect(summary({ args: ["a", "b"] }, { args: ["b"] }).map(c => c.path)).toEqual([
      "args[0]",
      "args[1]",
    ]);
  });

  it("escapes dotted label keys in paths", () => {
    const before = { metadata: { labels: { "app.kubernetes.io/name": "a" } } };
    const after = { metadata: { labels: { "app.kubernetes.io/name": "b" } } };
    expect(summary(before, after)[0].path).toBe("metadata.labels.app\\.kubernetes\\.io/name");
  });

  it("reports a type change at the node that changed type", () => {
    expect(summary({ a: { b: 1 } }, { a: [1] })).toEqual([
      { path: "a", before: { b: 1 }, after: [1], added: false, removed: false },
    ]);
  });

  it("jsonEqual treats key order as irrelevant and list order as relevant", () => {
    expect(jsonEqual({ a: 1, b: 2 }, { b: 2, a: 1 })).toBe(true);
    expect(jsonEqual([1, 2], [2, 1])).toBe(false);
    expect(jsonEqual({ a: undefined }, {})).toBe(false);
  });
});

describe("withoutServerFields", () => {
  const obj = {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: "x",
      resourceVersion: "5",
      uid: "u",
      generation: 2,
      creationTimestamp: "t",
      selfLink: "/x",
      managedFields: [{ manager: "m" }],
      labels: {},
    },
    data: {},
    status: { phase: "x" },
  };

  it("drops server metadata and status but keeps empty maps", () => {
    expect(withoutServerFields(obj)).toEqual({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "x", labels: {} },
      data: {},
    });
  });

  it("keeps status when asked and never mutates its input", () => {
    const out = withoutServerFields(obj, { includeStatus: true });
    expect(out.status).toEqual({ phase: "x" });
    expect(obj.metadata.uid).toBe("u");
  });
});
