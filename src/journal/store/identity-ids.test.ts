import { IdentityIds } from "./identity-ids";

describe("IdentityIds", () => {
  it("keeps identities that differ in any one part apart", () => {
    const ids = new IdentityIds(100);
    const parts = ["c", "apps", "Deployment", "ns", "web"] as const;
    ids.set(...parts, 1);
    for (let i = 0; i < parts.length; i++) {
      const other = [...parts] as [string, string, string, string, string];
      other[i] = `${other[i]}-x`;
      expect(ids.get(...other)).toBeUndefined();
      ids.set(...other, 10 + i);
    }
    expect(ids.get(...parts)).toBe(1);
    expect(ids.get("c", "apps", "Deployment", "ns", "web-x")).toBe(14);
    // Joined with a separator these two would collide; nested maps keep them apart.
    ids.set("c", "", "ConfigMap", "a\u0000b", "c", 20);
    expect(ids.get("c", "", "ConfigMap", "a", "b\u0000c")).toBeUndefined();
    expect(ids.size).toBe(7);
  });

  it("starts over once full instead of growing", () => {
    const ids = new IdentityIds(3);
    for (let i = 0; i < 3; i++) ids.set("c", "", "Pod", "ns", `p${i}`, i);
    expect(ids.size).toBe(3);
    ids.set("c", "", "Pod", "ns", "p1", 41); // an update, not a new entry
    expect(ids.size).toBe(3);
    ids.set("c", "", "Pod", "ns", "p3", 3);
    expect(ids.size).toBe(1);
    expect(ids.get("c", "", "Pod", "ns", "p0")).toBeUndefined();
    expect(ids.get("c", "", "Pod", "ns", "p3")).toBe(3);
  });

  it("keeps what it holds when its bound is raised, and starts over at the new one", () => {
    const ids = new IdentityIds(2);
    ids.set("c", "", "Pod", "ns", "p0", 0);
    ids.set("c", "", "Pod", "ns", "p1", 1);
    ids.capacity = 3;
    ids.set("c", "", "Pod", "ns", "p2", 2);
    expect([0, 1, 2].map(i => ids.get("c", "", "Pod", "ns", `p${i}`))).toEqual([0, 1, 2]);
    ids.set("c", "", "Pod", "ns", "p3", 3);
    expect(ids.size).toBe(1);
  });
});
