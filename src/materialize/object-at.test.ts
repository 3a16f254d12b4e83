import { coverageRecord, streamIdOf } from "../event";
import { openJournal } from "../journal";
import { at } from "../../test/support/journal-fixtures";
import { cms, deploys, useScriptedJournal } from "../../test/support/materialize-fixtures";
import { objectAt } from "./object-at";
import { snapshot } from "./snapshot";
import { OBSERVED_LATE } from "./warnings";

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

  it("after its stream stopped, answers stale instead of calling a frozen version current", () => {
    h.append([
      coverageRecord({
        stream: deploys,
        state: "stopped",
        reason: "recorder stopped",
        observedAt: at(35),
      }),
    ]);
    const a = objectAt(h.j, "c1", ref("Deployment", "web"), { time: at(45) });
    expect(a.data.exists).toBe(true);
    expect(a.coverage.complete).toBe(false);
    expect(a.coverage.unrecorded).toEqual([
      { streamId: streamIdOf(deploys), state: "stopped", reason: "recorder stopped" },
    ]);
    expect(a.warnings.join("\n")).toMatch(/stopped: recorder stopped.*stale/);
    // Before the stop the answer is complete as ever.
    expect(objectAt(h.j, "c1", ref("Deployment", "web"), { time: at(32) }).coverage.complete).toBe(
      true,
    );
    const snap = snapshot(h.j, "c1", at(45), "after-stop");
    expect(snap.data.complete).toBe(false);
    expect(snap.data.missing).toEqual([streamIdOf(deploys)]);
    expect(snap.coverage.unrecorded).toHaveLength(1);
  });

  it("inside a recorder down window warns that changes were observed late", () => {
    // The recorder was down from its checkpoint at 30 to the resume at 48.
    h.append([
      coverageRecord({
        stream: deploys,
        state: "available",
        reason: "recorder resumed from its checkpoint",
        observedAt: at(48),
        downSince: at(30),
      }),
    ]);
    const a = objectAt(h.j, "c1", ref("Deployment", "web"), { time: at(40) });
    expect(a.data.exists).toBe(true);
    expect(a.coverage.complete).toBe(false);
    expect(a.coverage.downWindows).toEqual([
      { streamId: streamIdOf(deploys), from: at(30), to: at(48) },
    ]);
    expect(a.warnings).toEqual([
      `stream ${streamIdOf(deploys)}: the recorder was down from ${at(30)} to ${at(48)}; ${OBSERVED_LATE}`,
    ]);
    expect(OBSERVED_LATE).toBe(
      "changes in this window were observed late; the times shown are not the times of change",
    );
    const snap = snapshot(h.j, "c1", at(40), "in-down-window");
    expect(snap.coverage.downWindows).toHaveLength(1);
    expect(snap.coverage.complete).toBe(false);
    expect(snap.warnings.join("\n")).toContain(OBSERVED_LATE);
    // After the resume nothing is late any more.
    expect(objectAt(h.j, "c1", ref("Deployment", "web"), { time: at(49) }).coverage).toMatchObject({
      complete: true,
      downWindows: [],
    });
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
