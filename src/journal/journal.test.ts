import Database from "better-sqlite3";
import {
  baselineRecords,
  checkpointRecord,
  coverageRecord,
  eventRecord,
  gapRecord,
  streamIdOf,
  type JournalRecord,
} from "../event";
import { openJournal, openJournalView } from "./index";
import {
  at,
  configMap,
  deployment,
  streamKey,
  tempJournalPath,
} from "../../test/support/journal-fixtures";
import { JournalError, type Journal } from "./types";

const deploys = streamKey("deployments", "apps", "v1", "shop");
const cms = streamKey("configmaps", "", "v1", "shop");
const sel = { clusterId: "test", kind: "Deployment", namespace: "shop", name: "web" };

function ev(
  type: "ADDED" | "MODIFIED" | "DELETED",
  rv: number,
  ready = 3,
  uid = "u1",
): JournalRecord {
  return eventRecord({
    stream: deploys,
    watchType: type,
    object: deployment("web", "shop", uid, rv, ready),
    observedAt: at(rv),
  });
}

describe("journal", () => {
  let tmp: ReturnType<typeof tempJournalPath>;
  let j: Journal;
  beforeEach(() => {
    tmp = tempJournalPath();
    j = openJournal(tmp.path, { keyframeEvery: 4 });
  });
  afterEach(() => {
    j.close();
    tmp.cleanup();
  });

  it("appends in ascending ingestSeq, dedups by eventId and counts duplicates", () => {
    const a = j.append({ records: [ev("ADDED", 1), ev("MODIFIED", 2, 2)], checkpoints: [] });
    expect(a).toEqual({ appended: 2, duplicates: 0, firstSeq: 1, lastSeq: 2 });
    const b = j.append({
      records: [ev("MODIFIED", 2, 2), ev("MODIFIED", 3, 1), ev("MODIFIED", 3, 1)],
      checkpoints: [],
    });
    expect(b).toEqual({ appended: 1, duplicates: 2, firstSeq: 3, lastSeq: 3 });
    expect(j.stats().duplicates).toBe(2);
    const page = j.events({});
    expect(page.records.map(r => r.ingestSeq)).toEqual([1, 2, 3]);
  });

  it("reads back exactly what was written across keyframes and patches", () => {
    const written = [ev("ADDED", 1)];
    for (let rv = 2; rv < 20; rv++) written.push(ev("MODIFIED", rv, rv % 4));
    j.append({ records: written, checkpoints: [] });
    const hist = j.objectHistory(sel);
    expect(hist).toHaveLength(written.length);
    hist.forEach((h, i) => {
      const { ingestSeq, ...rest } = h;
      expect(ingestSeq).toBe(i + 1);
      expect(rest).toEqual(written[i]);
    });
    // A fresh handle (no cache) reads the same and continues the chain from disk.
    j.close();
    j = openJournal(tmp.path, { keyframeEvery: 4 });
    j.append({ records: [ev("MODIFIED", 20, 0)], checkpoints: [] });
    expect(j.stats().cacheMisses).toBe(1);
    expect(j.objectAt(sel, { time: at(20) }).record?.object).toEqual(
      deployment("web", "shop", "u1", 20, 0),
    );
    expect(j.fsck()).toMatchObject({ ok: true, problems: [] });
  });

  it("commits checkpoints with their records and refuses one that points past them", () => {
    const sid = streamIdOf(deploys);
    j.append({
      records: [ev("ADDED", 1)],
      checkpoints: [{ streamId: sid, resourceVersion: "1", observedAt: at(1) }],
    });
    expect(j.streams()[0]).toMatchObject({
      streamId: sid,
      lastResourceVersion: "1",
      baselinePresent: false,
      openGaps: 0,
      state: "active",
    });
    expect(() =>
      j.append({
        records: [ev("MODIFIED", 2)],
        checkpoints: [{ streamId: sid, resourceVersion: "99", observedAt: at(2) }],
      }),
    ).toThrow(JournalError);
    // Nothing of the refused batch is visible.
    expect(j.events({}).records).toHaveLength(1);
    const bm = checkpointRecord({
      stream: deploys,
      resourceVersion: "50",
      observedAt: at(50),
      bookmark: true,
    });
    j.append({
      records: [bm],
      checkpoints: [{ streamId: sid, resourceVersion: "50", observedAt: at(50) }],
    });
    expect(j.streams()[0].lastResourceVersion).toBe("50");
    expect(j.objectHistory(sel)).toHaveLength(1); // a bookmark is never an object change
    expect(j.fsck().ok).toBe(true);
  });

  it("answers objectAt by time and by resourceVersion, across delete and re-create", () => {
    j.append({
      records: [ev("ADDED", 1), ev("MODIFIED", 2, 1), ev("DELETED", 3, 0)],
      checkpoints: [],
    });
    j.append({ records: [ev("ADDED", 10, 0, "u2")], checkpoints: [] });
    expect(j.objectAt(sel, { time: at(0) })).toMatchObject({ record: null, exists: false });
    expect(j.objectAt(sel, { time: at(2) }).record?.resource?.resourceVersion).toBe("2");
    const gone = j.objectAt(sel, { time: at(5) });
    expect(gone).toMatchObject({ record: null, exists: false });
    expect(gone.absence).toEqual({
      reason: "deleted",
      atMs: Date.parse(at(3)),
      resourceVersion: "3",
    });
    const back = j.objectAt(sel, { time: at(11) });
    expect(back.record?.resource?.uid).toBe("u2");
    const sid = streamIdOf(deploys);
    expect(
      j.objectAt(sel, { resourceVersion: "2", streamId: sid }).record?.object?.status,
    ).toMatchObject({ readyReplicas: 1 });
    expect(j.objectAt(sel, { resourceVersion: "nope", streamId: sid })).toMatchObject({
      record: null,
      exists: false,
      rvNotRecorded: true,
    });
    expect(j.objectHistory(sel).map(r => r.resource?.uid)).toEqual(["u1", "u1", "u1", "u2"]);
  });

  it("tracks gaps, resolves them by the next baseline and flags objects that vanished in the gap", () => {
    const sid = streamIdOf(deploys);
    j.append({ records: [ev("ADDED", 1)], checkpoints: [] });
    j.append({
      records: [
        gapRecord({
          stream: deploys,
          lastGoodResourceVersion: "1",
          reason: "410 Gone",
          detectedAt: at(100),
        }),
      ],
      checkpoints: [],
    });
    expect(j.streams()[0]).toMatchObject({ openGaps: 1, state: "degraded" });
    const during = j.objectAt(sel, { time: at(150) });
    expect(during.inGap).toBe(true);
    expect(during.exists).toBe(true);
    expect(during.gaps).toEqual([
      {
        streamId: sid,
        gapSeq: 2,
        fromMs: Date.parse(at(1)),
        toMs: null,
        reason: "410 Gone",
        lastGoodResourceVersion: "1",
        resolvedByBaselineRv: null,
      },
    ]);
    const other = deployment("api", "shop", "u9", 190, 3);
    j.append({
      records: baselineRecords({
        stream: deploys,
        listResourceVersion: "200",
        listedAt: at(200),
        objects: [other],
        kind: "Deployment",
      }),
      checkpoints: [{ streamId: sid, resourceVersion: "200", observedAt: at(200) }],
    });
    expect(j.streams()[0]).toMatchObject({
      openGaps: 0,
      state: "active",
      baselinePresent: true,
      lastResourceVersion: "200",
    });
    expect(j.gaps(sid)[0].gap?.resolvedByBaselineRv).toBe("200");
    expect(j.baselines(sid)).toHaveLength(1);
    const after = j.objectAt(sel, { time: at(300) });
    expect(after).toMatchObject({ exists: false, inGap: false, record: null });
    expect(after.absence).toEqual({
      reason: "vanished-in-gap",
      atMs: Date.parse(at(200)),
      resourceVersion: null,
    });
    expect(j.gapWindows(sid)).toEqual([
      expect.objectContaining({ fromMs: Date.parse(at(1)), toMs: Date.parse(at(200)) }),
    ]);
    expect(j.gapWindows(sid, { fromMs: Date.parse(at(250)), toMs: Date.parse(at(300)) })).toEqual(
      [],
    );
    expect(j.objectAt({ ...sel, name: "api" }, { time: at(300) }).exists).toBe(true);
  });

  it("starts a gap window at the record of the last good RV, not at a later coverage change", () => {
    const sid = streamIdOf(deploys);
    j.append({ records: [ev("ADDED", 1), ev("MODIFIED", 5)], checkpoints: [] });
    // After an API-server restart the first reconnect meets a 403, then access returns, then 410.
    j.append({
      records: [
        coverageRecord({
          stream: deploys,
          state: "unavailable",
          reason: "403 Forbidden",
          observedAt: at(97),
        }),
        coverageRecord({
          stream: deploys,
          state: "available",
          reason: "access restored",
          observedAt: at(98),
        }),
        gapRecord({
          stream: deploys,
          lastGoodResourceVersion: "5",
          reason: "410 Gone",
          detectedAt: at(99),
        }),
      ],
      checkpoints: [],
    });
    expect(j.gapWindows(sid)).toEqual([
      expect.objectContaining({ fromMs: Date.parse(at(5)), toMs: null }),
    ]);
    // A write lost at 50 lies inside the window, so an answer at 50 is not called complete.
    expect(j.objectAt(sel, { time: at(50) }).inGap).toBe(true);
    expect(
      j.gapWindows(sid, { fromMs: Date.parse(at(50)), toMs: Date.parse(at(50)) }),
    ).toHaveLength(1);
  });

  it("starts a gap whose last good RV the journal does not hold at the stream's last relist", () => {
    const sid = streamIdOf(deploys);
    j.append({
      records: baselineRecords({
        stream: deploys,
        listResourceVersion: "10",
        listedAt: at(10),
        objects: [deployment("web", "shop", "u1", 10, 3)],
        kind: "Deployment",
      }),
      checkpoints: [{ streamId: sid, resourceVersion: "10", observedAt: at(10) }],
    });
    j.append({ records: [ev("MODIFIED", 20)], checkpoints: [] });
    j.append({
      records: [
        gapRecord({
          stream: deploys,
          lastGoodResourceVersion: "77",
          reason: "journal lost or replaced",
          detectedAt: at(90),
        }),
      ],
      checkpoints: [],
    });
    expect(j.gapWindows(sid)).toEqual([
      expect.objectContaining({ fromMs: Date.parse(at(10)), toMs: null }),
    ]);
  });

  it("filters and pages events with an opaque cursor", () => {
    const recs: JournalRecord[] = [];
    for (let i = 1; i <= 30; i++) {
      recs.push(
        eventRecord({
          stream: cms,
          watchType: "ADDED",
          object: configMap(`c${i % 3}`, "shop", `cu${i}`, i, { k: String(i) }),
          observedAt: at(i),
        }),
      );
    }
    j.append({ records: recs, checkpoints: [] });
    const seen: number[] = [];
    let cursor: string | undefined;
    do {
      const page = j.events({ kind: "ConfigMap", name: "c1", limit: 4, cursor });
      seen.push(...page.records.map(r => Number(r.resource!.resourceVersion)));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual([1, 4, 7, 10, 13, 16, 19, 22, 25, 28]);
    expect(j.events({ since: at(10), until: at(12), types: ["event"] }).records).toHaveLength(3);
    expect(j.events({ clusterId: "other" }).records).toHaveLength(0);
    expect(() => j.events({ cursor: "garbage" })).toThrow(JournalError);
  });

  it("opens read-only, refuses writes, and refuses a newer schema", () => {
    j.append({ records: [ev("ADDED", 1)], checkpoints: [] });
    const ro = openJournalView(tmp.path);
    expect(ro.objectHistory(sel)).toHaveLength(1);
    // A view has no append at all; even a cast cannot make it write.
    expect("append" in ro).toBe(false);
    ro.close();
    j.close();
    const raw = new Database(tmp.path);
    raw.pragma("user_version = 99");
    raw.close();
    expect(() => openJournal(tmp.path)).toThrow(expect.objectContaining({ code: "SCHEMA_NEWER" }));
    j = openJournal(tmp.path + "-fresh");
  });
});
