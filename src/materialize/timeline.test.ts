import { streamIdOf } from "../event";
import { at } from "../../test/support/journal-fixtures";
import { cms, useScriptedJournal } from "../../test/support/materialize-fixtures";
import { timeline } from "./timeline";

describe("timeline", () => {
  const h = useScriptedJournal();

  it("lists each version with its changed fields and manager", () => {
    const t = timeline(h.j, "c1", { kind: "Deployment", namespace: "shop", name: "web" });
    expect(t.data.map(e => [e.resourceVersion, e.changes.map(c => c.path), e.note])).toEqual([
      ["10", [], "first seen in a list"],
      ["20", ["spec.replicas"], null],
      ["30", [], "no spec/metadata change"],
    ]);
    expect(t.data[1].manager).toBe("kubectl-edit (Update 2024-01-01T02:14:07Z)");
    expect(t.coverage.complete).toBe(true);
  });

  it("places a gap of the object's stream in the timeline and in its coverage", () => {
    h.loseWatch();
    const t = timeline(h.j, "c1", { kind: "ConfigMap", namespace: "shop", name: "new" });
    expect(t.data.map(e => e.kind)).toEqual(["version", "gap"]);
    expect(t.data[1]).toMatchObject({ observedAt: at(50), note: "unknown until now: 410 Gone" });
    expect(t.coverage.gaps).toEqual([
      { streamId: streamIdOf(cms), from: at(50), to: null, reason: "410 Gone" },
    ]);
    expect(t.coverage.complete).toBe(false);
  });

  it("says there is no record of an object never seen, and claims no completeness", () => {
    const t = timeline(h.j, "c1", { kind: "ConfigMap", namespace: "shop", name: "nope" });
    expect(t.data).toEqual([]);
    expect(t.coverage.complete).toBe(false);
    expect(t.warnings).toEqual(["no record of ConfigMap shop/nope"]);
  });
});
