import { streamIdOf } from "../event";
import { openJournal } from "../journal";
import { at } from "../../test/support/journal-fixtures";
import { cms, deploys, useScriptedJournal } from "../../test/support/materialize-fixtures";
import { objectAt } from "./object-at";

describe("objectAt", () => {
  const h = useScriptedJournal();
  const ref = (kind: string, name: string) => ({ kind, namespace: "shop", name });

  it("answers by time and by resourceVersion with provenance", () => {
    const byTime = objectAt(h.j, "c1", ref("Deployment", "web"), { time: at(25) });
    expect(byTime.data.exists).toBe(true);
    expect(byTime.coverage.complete).toBe(true);
    expect(byTime.data.object?.provenance).toMatchObject({
      resourceVersion: "20",
      watchType: "MODIFIED",
    });
    const byRv = objectAt(
      h.j,
      "c1",
      { streamId: streamIdOf(deploys), namespace: "shop", name: "web" },
      { resourceVersion: "10" },
    );
    expect(byRv.data.object?.provenance).toMatchObject({ recordType: "baseline", synthetic: true });
  });

  it("says when and how an object was deleted", () => {
    const gone = objectAt(h.j, "c1", ref("ConfigMap", "cfg"), { time: at(55) });
    expect(gone.data).toEqual({ exists: false, object: null });
    expect(gone.warnings).toEqual([
      `ConfigMap shop/cfg was deleted at ${at(50)} (resourceVersion 50)`,
    ]);
  });

  it("inside a gap shows the last known version, marks the answer incomplete and says why", () => {
    h.loseWatch();
    const inGap = objectAt(h.j, "c1", ref("ConfigMap", "new"), { time: at(65) });
    expect(inGap.data.exists).toBe(true);
    expect(inGap.coverage.complete).toBe(false);
    expect(inGap.coverage.gaps).toEqual([
      { streamId: streamIdOf(cms), from: at(50), to: null, reason: "410 Gone" },
    ]);
    expect(inGap.warnings).toEqual([
      `stream ${streamIdOf(cms)} has a gap from ${at(50)} to now (unresolved) (410 Gone); changes in it are unknown`,
      "the object shown is the last version known before the gap; it may have changed",
    ]);
  });

  it("names a resourceVersion that was never recorded", () => {
    const a = objectAt(h.j, "c1", ref("Deployment", "web"), { resourceVersion: "999" });
    expect(a.data.exists).toBe(false);
    expect(a.warnings).toEqual([
      `resourceVersion 999 was never recorded on stream ${streamIdOf(deploys)}`,
    ]);
  });

  it("says there is no record of an object never seen", () => {
    const a = objectAt(h.j, "c1", ref("ConfigMap", "nope"), { time: at(55) });
    expect(a.data.exists).toBe(false);
    expect(a.warnings).toEqual(["no record of ConfigMap shop/nope at or before that point"]);
  });

  it("says so when the point is before pruned history", () => {
    h.j.close();
    h.j = openJournal(h.path, { retention: { maxAgeMs: 25_000 } });
    expect(h.j.prune(new Date(at(60)))).not.toBeNull();
    const old = objectAt(h.j, "c1", ref("Deployment", "web"), { time: at(15) });
    expect(old.coverage.prunedBefore).not.toBeNull();
    expect(old.coverage.complete).toBe(false);
    expect(old.warnings.join("\n")).toMatch(/pruned/);
  });
});
