import { compareSnapshots, incompleteness, type SnapshotSummary } from "./snapshot-model";

const cm = (name: string, data: Record<string, string>, rv = "1") => ({
  kind: "ConfigMap",
  group: "",
  namespace: "shop",
  name,
  object: { apiVersion: "v1", kind: "ConfigMap", metadata: { name, resourceVersion: rv }, data },
});

describe("comparing two snapshots", () => {
  it("lists objects added, removed and changed, ignoring server metadata", () => {
    const d = compareSnapshots(
      [cm("a", { x: "1" }), cm("b", { x: "1" }), cm("same", {}, "5")],
      [cm("b", { x: "2" }), cm("c", {}), cm("same", {}, "9")],
    );
    expect(d.map(o => [o.name, o.change, o.fields.map(f => f.path)])).toEqual([
      ["a", "removed", []],
      ["b", "changed", ["data.x"]],
      ["c", "added", []],
    ]);
  });
});

describe("snapshot completeness", () => {
  const s: SnapshotSummary = {
    id: "s1",
    takenAt: "t",
    clusterId: "c1",
    name: "n",
    at: "t",
    complete: true,
    missing: [],
    warnings: [],
    objectCount: 3,
    watermarks: {},
  };
  it("says why a snapshot is incomplete", () => {
    expect(incompleteness(s)).toBeNull();
    expect(incompleteness({ ...s, complete: false, missing: ["x"], warnings: ["w", "v"] })).toBe(
      "1 stream not covered, 2 warnings",
    );
    expect(incompleteness({ ...s, complete: false })).toBe("incomplete");
  });
});
