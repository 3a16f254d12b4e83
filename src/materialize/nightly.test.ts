import { baselineRecords, type StreamKey } from "../event";
import { openJournal } from "../journal";
import { at, configMap, tempJournalPath } from "../../test/support/journal-fixtures";
import { loadConfig } from "../config";
import { nightlyConfigOf, runScheduledSnapshot } from "./nightly";
import { listSnapshots } from "./snapshot";

const cms: StreamKey = {
  clusterId: "c1",
  group: "",
  version: "v1",
  resource: "configmaps",
  namespace: "",
  selector: "",
};

describe("scheduled snapshots", () => {
  it("starts a 24-hour schedule at the next HH:MM UTC", () => {
    const cfg = nightlyConfigOf(
      loadConfig({ KRPLY_SNAPSHOT_AT: "02:30" }).snapshot,
      new Date("2026-03-01T05:00:00Z"),
    );
    expect(cfg).toEqual({
      keep: 7,
      everyHours: 24,
      startTime: new Date("2026-03-02T02:30:00Z"),
    });
    const same = nightlyConfigOf(
      loadConfig({
        KRPLY_SNAPSHOT_AT: "06:00",
        KRPLY_SNAPSHOT_KEEP: "3",
        KRPLY_SNAPSHOT_EVERY_HOURS: "12",
      }).snapshot,
      new Date("2026-03-01T05:00:00Z"),
    );
    expect(same).toMatchObject({
      keep: 3,
      everyHours: 12,
      startTime: new Date("2026-03-01T06:00:00Z"),
    });
  });

  it("starts tomorrow when the time of day is exactly now", () => {
    const cfg = nightlyConfigOf(
      { at: { hour: 5, minute: 0 }, everyHours: 24, keep: 7 },
      new Date("2026-03-01T05:00:00Z"),
    );
    expect(cfg.startTime).toEqual(new Date("2026-03-02T05:00:00Z"));
  });

  it("snapshots every cluster, stores the record and deletes all but the newest keep", () => {
    const tmp = tempJournalPath("krply-nightly-");
    try {
      const j = openJournal(tmp.path);
      j.append({
        records: baselineRecords({
          stream: cms,
          listResourceVersion: "5",
          listedAt: at(1),
          objects: [configMap("a", "ns", "u1", 5, {})],
          kind: "ConfigMap",
        }),
        checkpoints: [],
        streams: [cms],
      });
      // The run writes through the journal it is given (the recorder's, in the cluster) and leaves it open.
      const first = runScheduledSnapshot(j, 1, new Date(at(10)));
      expect(j.stats().records).toBeGreaterThan(0);
      expect(first.taken).toEqual([
        { clusterId: "c1", id: expect.any(String), complete: true, missing: [] },
      ]);
      expect(first.warnings).toEqual([]);
      const second = runScheduledSnapshot(j, 1, new Date(at(20)));
      j.close();
      expect(second.expired.map(s => s.at)).toEqual([at(10)]);
      expect(second.deleted).toBe(1);
      expect(second.warnings).toEqual([]);
      const again = openJournal(tmp.path);
      expect(listSnapshots(again).map(s => s.at)).toEqual([at(20)]);
      // Only the snapshot record went; the baseline it summarised is untouched.
      expect(again.baselines().length).toBeGreaterThan(0);
      expect(again.fsck()).toMatchObject({ ok: true, problems: [] });
      again.close();
    } finally {
      tmp.cleanup();
    }
  });
});
