import { Children, groupMembers, parseProcStat } from "./children";

describe("parseProcStat", () => {
  it("reads state and process group after a command name with spaces and parentheses", () => {
    expect(parseProcStat("4911 (node (a) b) S 3693 3693 3693 0 -1")).toEqual({
      state: "S",
      pgid: 3693,
    });
    expect(parseProcStat("12 (x) Z 1 7 7 0")).toEqual({ state: "Z", pgid: 7 });
    expect(parseProcStat("garbage")).toBeUndefined();
  });
});

describe("Children", () => {
  it("ends a child's whole process group, grandchildren included", async () => {
    const children = new Children();
    // sh starts a grandchild in the same group and waits: both must go.
    const c = children.spawn("sleeper", "sh", ["-c", "sleep 300 & wait"]);
    const deadline = Date.now() + 10_000;
    while (groupMembers(c.pid).length < 2 && Date.now() < deadline) {
      await new Promise(r => setTimeout(r, 50));
    }
    expect(groupMembers(c.pid).length).toBe(2);
    await children.stopAll(5000);
    expect(groupMembers(c.pid)).toEqual([]);
  });
});
