import { baselineRecords, type StreamKey } from "../event";
import { openJournal } from "../journal";
import { at, configMap, tempJournalPath } from "../../test/support/journal-fixtures";
import { nightlyConfigFromEnv, scheduledSnapshotJob } from "./nightly";
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
  it("reads a 24-hour schedule starting at the next HH:MM UTC", () => {
    const cfg = nightlyConfigFromEnv(
      { KRPLY_SNAPSHOT_AT: "02:30" },
      new Date("2026-03-01T05:00:00Z"),
    );
    expect(cfg).toEqual({
      journalPath: "/var/lib/krply/journal.db",
      keep: 7,
      everyHours: 24,
      startTime: new Date("2026-03-02T02:30:00Z"),
    });
    const same = nightlyConfigFromEnv(
      { KRPLY_SNAPSHOT_AT: "06:00", KRPLY_SNAPSHOT_KEEP: "3", KRPLY_SNAPSHOT_EVERY_HOURS: "12" },
      new Date("2026-03-01T05:00:00Z"),
    );
    expect(same).toMatchObject({
      keep: 3,
      everyHours: 12,
      startTime: new Date("2026-03-01T06:00:00Z"),
    });
  });

  it("rejects bad configuration with the variable named", () => {
    expect(() => nightlyConfigFromEnv({ KRPLY_SNAPSHOT_AT: "25:00" })).toThrow(/KRPLY_SNAPSHOT_AT/);
    expect(() => nightlyConfigFromEnv({ KRPLY_SNAPSHOT_KEEP: "0" })).toThrow(/KRPLY_SNAPSHOT_KEEP/);
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
      const cfg = { journalPath: tmp.path, keep: 1, everyHours: 24, startTime: new Date() };
      // The recorder's open journal is reused (the journal takes one writer) and left open.
      const first = scheduledSnapshotJob(cfg, new Date(at(10)), j);
      expect(j.stats().records).toBeGreaterThan(0);
      expect(first.taken).toEqual([
        { clusterId: "c1", id: expect.any(String), complete: true, missing: [] },
      ]);
      expect(first.warnings).toEqual([]);
      j.close();
      const second = scheduledSnapshotJob(cfg, new Date(at(20)));
      expect(second.expired.map(s => s.at)).toEqual([at(10)]);
      expect(second.deleted).toBe(1);
      expect(second.warnings).toEqual([]);
      const again = openJournal(tmp.path, { readonly: true });
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
