import { tempJournalPath } from "../../../test/support/journal-fixtures";
import { openJournal } from "../journal";
import { openReplayStore } from "./replay-store";

describe("replay store", () => {
  it("keeps plans, dry runs and apply runs beside the recorder's writer", () => {
    const tmp = tempJournalPath("krply-replay-store-");
    const journal = openJournal(tmp.path);
    const store = openReplayStore(tmp.path);
    try {
      const plan = {
        id: "rp-1",
        createdAt: "2026-01-01T00:00:00Z",
        digest: "sha256:a",
        sourceCluster: "s",
        targetCluster: "t",
        body: { objects: [{ data: {} }] },
      };
      store.savePlan(plan);
      store.savePlan(plan); // the same content again is a no-op
      expect(() => store.savePlan({ ...plan, digest: "sha256:b" })).toThrow(/another digest/);
      expect(store.plan("rp-1")).toEqual(plan);
      expect(store.plan("nope")).toBeNull();
      store.saveDryRun("rp-1", "sha256:a", "2026-01-01T00:01:00Z", false, { n: 1 });
      store.saveDryRun("rp-1", "sha256:a", "2026-01-01T00:02:00Z", true, { n: 2 });
      expect(store.latestDryRun("rp-1")).toMatchObject({
        ok: true,
        key: "sha256:a",
        body: { n: 2 },
      });
      store.saveApplyRun("run-1", "rp-1", "2026-01-01T00:03:00Z", true, { applied: 1 });
      expect(store.applyRuns("rp-1")).toEqual([
        {
          planId: "rp-1",
          key: "run-1",
          at: "2026-01-01T00:03:00Z",
          ok: true,
          body: { applied: 1 },
        },
      ]);
      // The recorder's writer is undisturbed and reads see the plans.
      expect(journal.append({ records: [], checkpoints: [] }).appended).toBe(0);
      const ro = openReplayStore(tmp.path, { readonly: true });
      expect(ro.plans().map(p => p.id)).toEqual(["rp-1"]);
      ro.close();
    } finally {
      store.close();
      journal.close();
      tmp.cleanup();
    }
  });
});
