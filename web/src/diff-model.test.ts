import {
  fieldRows,
  flatten,
  MAX_CELLS,
  prettyText,
  sideBySide,
  withoutServerMetadata,
} from "./diff-model";

const v1 = {
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: {
    name: "web",
    namespace: "shop",
    uid: "u1",
    resourceVersion: "10",
    generation: 1,
    creationTimestamp: "2024-01-01T00:00:00Z",
    managedFields: [{ manager: "kubectl" }],
    labels: { app: "web" },
  },
  spec: { replicas: 3, template: { spec: { containers: [{ name: "web", image: "web:1" }] } } },
};
const v2 = {
  ...v1,
  metadata: {
    ...v1.metadata,
    resourceVersion: "20",
    generation: 2,
    labels: { app: "web", "tier.io/x": "a" },
  },
  spec: { replicas: 5, template: { spec: { containers: [{ name: "web", image: "web:2" }] } } },
};

describe("server metadata", () => {
  it("is hidden from a copy without touching the object", () => {
    const s = withoutServerMetadata(v1) as typeof v1;
    expect(Object.keys(s.metadata).sort()).toEqual(["labels", "name", "namespace"]);
    expect(v1.metadata.uid).toBe("u1");
    expect(withoutServerMetadata(null)).toBeNull();
  });
});

describe("field list", () => {
  it("lists each changed, added and removed leaf by path", () => {
    expect(fieldRows(withoutServerMetadata(v1), withoutServerMetadata(v2))).toEqual([
      { path: 'metadata.labels["tier.io/x"]', change: "added", after: "a" },
      { path: "spec.replicas", change: "changed", before: 3, after: 5 },
      {
        path: "spec.template.spec.containers[0].image",
        change: "changed",
        before: "web:1",
        after: "web:2",
      },
    ]);
    // With metadata shown, the server's bookkeeping differs too.
    expect(fieldRows(v1, v2).map(r => r.path)).toContain("metadata.resourceVersion");
  });

  it("treats empty maps and lists as values of their own", () => {
    expect([...flatten({ data: {}, args: [] }).entries()]).toEqual([
      ["data", {}],
      ["args", []],
    ]);
    expect(fieldRows({ data: {} }, { data: { a: "1" } })).toEqual([
      { path: "data", change: "removed", before: {} },
      { path: "data.a", change: "added", after: "1" },
    ]);
    expect(fieldRows({}, null)).toEqual([
      { path: "(root)", change: "changed", before: {}, after: null },
    ]);
  });
});

describe("side by side", () => {
  it("aligns common lines and pairs a changed line with its replacement", () => {
    const rows = sideBySide(
      prettyText({ a: 1, b: 2, c: 3 }),
      prettyText({ a: 1, b: 9, c: 3, d: 4 }),
    );
    expect(rows.filter(r => r.kind !== "same")).toEqual([
      { left: '  "b": 2,', right: '  "b": 9,', kind: "change" },
      { left: '  "c": 3', right: '  "c": 3,', kind: "change" },
      { left: null, right: '  "d": 4', kind: "add" },
    ]);
    expect(rows[0]).toEqual({ left: "{", right: "{", kind: "same" });
  });

  it("shows a deleted object as every line removed, and stays bounded on huge inputs", () => {
    expect(sideBySide("x\ny", "")).toEqual([
      { left: "x", right: null, kind: "del" },
      { left: "y", right: null, kind: "del" },
    ]);
    const n = Math.ceil(Math.sqrt(MAX_CELLS)) + 10;
    const a = Array.from({ length: n }, (_, i) => `a${i}`).join("\n");
    const b = Array.from({ length: n }, (_, i) => `b${i}`).join("\n");
    const rows = sideBySide(a, b);
    expect(rows).toHaveLength(n);
    expect(rows.every(r => r.kind === "change")).toBe(true);
  });
});
