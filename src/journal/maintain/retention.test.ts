import { eventRecord, gapRecord, streamIdOf, type JournalRecord } from "../../event";
import { openJournal } from "../index";
import { walLimits } from "./retention";
import { at, deployment, streamKey, tempJournalPath } from "../../../test/support/journal-fixtures";

const stream = streamKey("deployments", "apps", "v1", "shop");
const sid = streamIdOf(stream);

function batch(from: number, n: number, objects: number, time = at): JournalRecord[] {
  const out: JournalRecord[] = [];
  for (let rv = from; rv < from + n; rv++) {
    const o = deployment(`d${rv % objects}`, "shop", `u${rv % objects}`, rv, rv % 4);
    o.metadata.annotations = { churn: `${rv}`.repeat(30) };
    out.push(eventRecord({ stream, watchType: "MODIFIED", object: o, observedAt: time(rv) }));
  }
  return out;
}

/** A journal that prunes past one hour of age, with one keyframe for up to 100 versions. */
function hourJournal(): {
  tmp: ReturnType<typeof tempJournalPath>;
  j: ReturnType<typeof openJournal>;
  base: number;
  t: (s: number) => string;
} {
  const tmp = tempJournalPath();
  const j = openJournal(tmp.path, {
    retention: { maxAgeMs: 3600_000 },
    keyframeEvery: 100,
    sync: "NORMAL",
  });
  // Nothing is old by the wall clock, so only an explicit prune removes anything.
  const base = Date.now();
  return { tmp, j, base, t: (s: number) => new Date(base + s * 1000).toISOString() };
}

describe("retention", () => {
  it("stays within the byte budget plus 10% and leaves a keyframe at the horizon", () => {
    const tmp = tempJournalPath();
    const budget = 1_000_000;
    const j = openJournal(tmp.path, {
      retention: { maxBytes: budget },
      keyframeEvery: 8,
      sync: "NORMAL",
    });
    try {
      let rv = 1;
      let maxSize = 0;
      for (let b = 0; b < 120; b++) {
        const recs = batch(rv, 100, 40);
        rv += 100;
        j.append({
          records: recs,
          checkpoints: [{ streamId: sid, resourceVersion: String(rv - 1), observedAt: at(rv - 1) }],
        });
        maxSize = Math.max(maxSize, j.sizeBytes());
      }
      expect(maxSize).toBeLessThanOrEqual(budget * 1.1);
      const pruned = j.events({ types: ["pruned"] }).records;
      expect(pruned.length).toBeGreaterThan(0);
      expect(pruned[0].pruned?.reason).toBe("bytes");
      const horizon = pruned[pruned.length - 1].pruned!.before;
      // Every object is still answerable at the horizon, from its kept keyframe.
      const after = Date.parse(horizon) + 1;
      for (let i = 0; i < 40; i++) {
        const res = j.objectAt(
          { clusterId: "test", kind: "Deployment", namespace: "shop", name: `d${i}` },
          { time: new Date(after).toISOString() },
        );
        expect(res.exists).toBe(true);
        expect(res.prunedBefore).toBeNull();
      }
      const early = j.objectAt(
        { clusterId: "test", kind: "Deployment", namespace: "shop", name: "d1" },
        { time: at(2) },
      );
      expect(early.prunedBefore).toBe(horizon);
      expect(early.exists).toBe(false);
      // The latest version reads back exactly.
      const last = batch(rv - 1, 1, 40)[0];
      const cur = j.objectAt(
        { clusterId: "test", kind: "Deployment", namespace: "shop", name: last.resource!.name },
        { time: at(rv) },
      );
      expect(cur.record?.object).toEqual(last.object);
      expect(j.streams()[0].lastResourceVersion).toBe(String(rv - 1));
      expect(j.fsck()).toMatchObject({ ok: true, problems: [] });
    } finally {
      j.close();
      tmp.cleanup();
    }
  }, 120_000);

  it("prunes by age, keeps open gaps, and writes a pruned record", () => {
    const tmp = tempJournalPath();
    const j = openJournal(tmp.path, {
      retention: { maxAgeMs: 4 * 3600_000 },
      keyframeEvery: 4,
      sync: "NORMAL",
    });
    // Appends also prune by age against the wall clock, so these times are relative to now.
    const base = Date.now() - 3 * 3600_000;
    const t = (s: number): string => new Date(base + s * 1000).toISOString();
    try {
      j.append({ records: batch(1, 50, 5, t), checkpoints: [] });
      const gap = gapRecord({
        stream,
        lastGoodResourceVersion: "50",
        reason: "410",
        detectedAt: t(60),
      });
      j.append({ records: [gap], checkpoints: [] });
      j.append({
        records: batch(7200, 20, 5, t),
        checkpoints: [{ streamId: sid, resourceVersion: "7219", observedAt: t(7219) }],
      });
      const now = new Date(base + 5 * 3600_000);
      const rec = j.prune(now);
      expect(rec?.pruned).toMatchObject({ reason: "age" });
      expect(rec!.pruned!.removedRecords).toBeGreaterThan(40);
      expect(j.gaps(sid)).toHaveLength(1);
      expect(j.streams()[0].openGaps).toBe(1);
      const sel = { clusterId: "test", kind: "Deployment", namespace: "shop", name: "d1" };
      const hist = j.objectHistory(sel);
      expect(hist[0].observedAt < t(7200)).toBe(true); // the kept keyframe from before the horizon
      expect(hist[0].object).toEqual(batch(46, 1, 5, t)[0].object);
      expect(j.fsck()).toMatchObject({ ok: true, problems: [] });
      expect(j.prune(now)).toBeNull();
    } finally {
      j.close();
      tmp.cleanup();
    }
  });

  it("re-encodes surviving patches whose keyframe fell below the horizon", () => {
    // One keyframe for all 20 versions, so pruning the first 10 removes the base of the rest.
    const { tmp, j, base, t } = hourJournal();
    const late = (rv: number): string => t(rv <= 10 ? rv : 3600 + rv);
    try {
      const written = batch(1, 20, 1, late);
      j.append({ records: written, checkpoints: [] });
      const rec = j.prune(new Date(base + 2 * 3600_000));
      expect(rec?.pruned?.removedRecords).toBe(9);
      const sel = { clusterId: "test", kind: "Deployment", namespace: "shop", name: "d0" };
      const hist = j.objectHistory(sel);
      // The horizon keyframe (version 10) and every later version, each exactly as written.
      expect(hist.map(r => r.object)).toEqual(written.slice(9).map(r => r.object));
      expect(j.fsck()).toMatchObject({ ok: true, problems: [] });
      // The writer forgot its cached keyframe, so the next version is diffed against the new one.
      const next = batch(21, 1, 1, late);
      j.append({ records: next, checkpoints: [] });
      expect(j.objectHistory(sel).at(-1)?.object).toEqual(next[0].object);
      expect(j.fsck()).toMatchObject({ ok: true, problems: [] });
    } finally {
      j.close();
      tmp.cleanup();
    }
  });
});

describe("retention of kept patches", () => {
  it("keeps a deleted object's checkpointed record readable after its keyframe is pruned", () => {
    const { tmp, j, base, t } = hourJournal();
    try {
      const old = batch(1, 3, 1, t);
      const gone = deployment("d0", "shop", "u0", 4, 0);
      old.push(eventRecord({ stream, watchType: "DELETED", object: gone, observedAt: t(4) }));
      // The stream's checkpoint names the delete, so pruning must keep that record.
      j.append({
        records: old,
        checkpoints: [{ streamId: sid, resourceVersion: "4", observedAt: t(4) }],
      });
      j.prune(new Date(base + 2 * 3600_000));
      expect(j.fsck()).toMatchObject({ ok: true, problems: [] });
      const kept = j.events({ types: ["event"] }).records;
      expect(kept.map(r => r.watchType)).toEqual(["DELETED"]);
      expect(kept[0].object).toEqual(JSON.parse(JSON.stringify(gone)));
    } finally {
      j.close();
      tmp.cleanup();
    }
  });
});

describe("the WAL under a byte budget", () => {
  it("takes its share of a small budget, and never more than 64 MiB between checkpoints of a large one", () => {
    const page = 16_384;
    // 20 MiB budget: 5% is 1 MiB, checkpointed at half of it.
    expect(walLimits(20 * 2 ** 20, page)).toEqual({
      autocheckpointPages: 32,
      sizeLimitBytes: 1_048_576,
    });
    // 80% of a 1 TiB disk would otherwise allow a 41 GiB WAL.
    expect(walLimits(0.8 * 2 ** 40, page)).toEqual({
      autocheckpointPages: 2048,
      sizeLimitBytes: 64 * 2 ** 20,
    });
    expect(walLimits(1024, page).autocheckpointPages).toBe(8);
  });
});
