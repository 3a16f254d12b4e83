import { openJournal } from "../journal";
import { tempJournalPath } from "../../test/support/journal-fixtures";
import { RECORDER_JOURNAL_CACHES } from "./recorder";
import { JournalSink } from "./sink";
import { bigClusterTuning, resumePointOf } from "./supervisor";
import { EngineOptionsSchema } from "./types";

describe("resumePointOf", () => {
  const info = {
    streamId: "s",
    key: {
      clusterId: "c",
      group: "",
      version: "v1",
      resource: "pods",
      namespace: "",
      selector: "",
    },
    lastResourceVersion: "42",
    lastObservedAt: null,
    baselinePresent: true,
    openGaps: 0,
    state: "active" as const,
  };

  it("resumes from the durable checkpoint, and relists only without a baseline or with an open gap", () => {
    expect(resumePointOf(undefined)).toEqual({
      rv: null,
      needList: true,
      coverage: "unknown",
      downSince: null,
    });
    expect(resumePointOf(info)).toEqual({
      rv: "42",
      needList: false,
      coverage: "unknown",
      downSince: null,
    });
    expect(resumePointOf({ ...info, openGaps: 1 }).needList).toBe(true);
    expect(resumePointOf({ ...info, baselinePresent: false }).needList).toBe(true);
    expect(resumePointOf({ ...info, lastResourceVersion: null }).needList).toBe(true);
    expect(resumePointOf({ ...info, state: "unavailable" }).coverage).toBe("unavailable");
    expect(resumePointOf({ ...info, state: "stopped" }).coverage).toBe("stopped");
  });

  it("a stream resuming after downtime carries its last durable checkpoint as the down window's start", () => {
    const t = "2026-12-01T10:00:00.000Z";
    expect(resumePointOf({ ...info, lastObservedAt: t }).downSince).toBe(t);
    // Without a baseline nothing was recorded to be late against: it lists afresh.
    expect(
      resumePointOf({ ...info, lastObservedAt: t, baselinePresent: false }).downSince,
    ).toBeNull();
  });
});

describe("bigClusterTuning", () => {
  it("grows the recorder's page cache and identity map once a big cluster is listed, so its indexes and ids stay cached", () => {
    const tmp = tempJournalPath("krply-big-cluster-");
    const journal = openJournal(tmp.path, { ...RECORDER_JOURNAL_CACHES });
    try {
      const options = EngineOptionsSchema.parse({});
      expect(journal.stats().pageCacheKiB).toBe(RECORDER_JOURNAL_CACHES.pageCacheKiB);
      expect(journal.stats().identities.capacity).toBeLessThan(options.bigClusterIdentities);
      const sink = new JournalSink(journal, { capacity: 10, maxBatch: 10 });
      bigClusterTuning(sink, journal, options)();
      expect(options.bigClusterPageCacheKiB).toBeGreaterThan(RECORDER_JOURNAL_CACHES.pageCacheKiB);
      expect(journal.stats().pageCacheKiB).toBe(options.bigClusterPageCacheKiB);
      // Every object of the cluster keeps its identity's id in memory.
      expect(journal.stats().identities.capacity).toBe(options.bigClusterIdentities);
      expect(options.bigClusterIdentities).toBeGreaterThanOrEqual(150_000);
      // Appends move to the writer thread from the next one on (auto, the default).
      expect(journal.writerThreadStatus()).toEqual({ state: "pending" });
    } finally {
      journal.close();
      tmp.cleanup();
    }
  });

  it("keeps appends on the main thread when the writer thread is off", () => {
    const tmp = tempJournalPath("krply-big-cluster-");
    const journal = openJournal(tmp.path, { ...RECORDER_JOURNAL_CACHES });
    try {
      const options = EngineOptionsSchema.parse({ writerThread: "off" });
      const sink = new JournalSink(journal, { capacity: 10, maxBatch: 10 });
      bigClusterTuning(sink, journal, options)();
      expect(journal.stats().pageCacheKiB).toBe(options.bigClusterPageCacheKiB);
      expect(journal.writerThreadStatus()).toEqual({ state: "off" });
    } finally {
      journal.close();
      tmp.cleanup();
    }
  });
});
