import { openJournal } from "../journal";
import { at } from "../../test/support/journal-fixtures";
import { useScriptedJournal } from "../../test/support/materialize-fixtures";
import { diff } from "./diff";

describe("diff", () => {
  const h = useScriptedJournal();

  it("reports exactly the scripted edits and nothing from server noise", () => {
    const { data: d, coverage, warnings } = diff(h.j, "c1", at(15), at(55), { namespace: "shop" });
    expect(d.hasGaps).toBe(false);
    expect(coverage).toEqual({
      complete: true,
      gaps: [],
      downWindows: [],
      unrecorded: [],
      prunedBefore: null,
    });
    expect(warnings).toEqual([]);
    const byName = Object.fromEntries(d.objects.map(o => [o.name, o]));
    expect(Object.keys(byName).sort()).toEqual(["cfg", "new", "web"]);
    expect(byName.new.change).toBe("added");
    expect(byName.cfg.change).toBe("removed");
    expect(byName.web.changes.map(c => [c.path, c.before, c.after])).toEqual([
      ["spec.replicas", 3, 5],
    ]);
    expect(byName.web.changes[0].managers[0]).toMatchObject({
      manager: "kubectl-edit",
      operation: "Update",
      time: "2024-01-01T02:14:07Z",
    });
  });

  it("shows status changes only when asked", () => {
    const quiet = diff(h.j, "c1", at(25), at(35)).data;
    expect(quiet.objects).toEqual([]);
    const loud = diff(h.j, "c1", at(25), at(35), { includeStatus: true }).data;
    expect(loud.objects[0].changes.map(c => c.path)).toEqual(["status.readyReplicas"]);
    expect(loud.objects[0].changes[0].managers[0]).toMatchObject({
      manager: "kube-controller-manager",
      subresource: "status",
    });
  });

  it("across a gap reports hasGaps, the gap in its coverage, and what the relist found", () => {
    h.loseWatch();
    h.relistConfigMaps();
    const d = diff(h.j, "c1", at(55), at(75), { namespace: "shop" });
    expect(d.data.hasGaps).toBe(true);
    expect(d.coverage.complete).toBe(false);
    expect(d.coverage.gaps).toEqual([
      {
        streamId: expect.stringContaining("configmaps"),
        from: at(50),
        to: at(70),
        reason: "410 Gone",
      },
    ]);
    expect(d.warnings.join("\n")).toMatch(/gap from .* \(410 Gone\)/);
    expect(d.data.objects.map(o => [o.name, o.change])).toEqual([
      ["late", "added"],
      ["new", "removed"],
    ]);
  });

  it("says the earlier side may be incomplete when it reaches before pruned history", () => {
    h.j.close();
    h.j = openJournal(h.path, { retention: { maxAgeMs: 25_000 } });
    expect(h.j.prune(new Date(at(60)))).not.toBeNull();
    const d = diff(h.j, "c1", at(15), at(55));
    expect(d.data.hasGaps).toBe(true);
    expect(d.coverage.prunedBefore).not.toBeNull();
    expect(d.warnings.join("\n")).toMatch(/pruned; the earlier side may be incomplete/);
  });

  it("refuses an after earlier than before", () => {
    expect(() => diff(h.j, "c1", at(50), at(10))).toThrow(/earlier than before/);
  });
});
