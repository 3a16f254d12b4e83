// The writer's tier of keyframe bodies (store/keyframe-bodies.ts) answers misses of its object cache:
// what it writes must be exactly what a writer without the tier writes, and a body kept for a
// keyframe the file no longer has as current is never diffed against.
import Database from "better-sqlite3";
import { eventRecord, type JournalRecord } from "../../event";
import { keyframeText } from "../codec/codec";
import { openJournal, type Journal, type JournalOptions } from "../index";
import { at, deployment, streamKey, tempJournalPath } from "../../../test/support/journal-fixtures";

const stream = streamKey("deployments", "apps", "v1", "shop");
const OBJECTS = 12;
const sel = (obj: number) => ({
  clusterId: "test",
  kind: "Deployment",
  namespace: "shop",
  name: `web-${obj}`,
});

/** Versions of OBJECTS Deployments, objects visited in a scattered order, status changing each time. */
function workload(n: number, from = 0): JournalRecord[] {
  return Array.from({ length: n }, (_, k) => {
    const i = from + k;
    const obj = (i * 7 + (i >> 3)) % OBJECTS;
    return eventRecord({
      stream,
      watchType: i < OBJECTS ? "ADDED" : "MODIFIED",
      object: deployment(`web-${obj}`, "shop", `u-${obj}`, i + 1, (i * 5) % 4),
      observedAt: at(i),
    });
  });
}

function appendAll(j: Journal, recs: JournalRecord[], batch = 6): void {
  for (let i = 0; i < recs.length; i += batch)
    j.append({ records: recs.slice(i, i + batch), checkpoints: [] });
}

/** Every object row as stored: position, encoding, keyframe and the decoded body text. */
function storedRows(path: string): unknown[] {
  const db = new Database(path, { readonly: true });
  try {
    const rows = db
      .prepare(
        "SELECT seq, object, flags, base, body FROM records WHERE object IS NOT NULL ORDER BY seq",
      )
      .all() as { seq: number; object: number; flags: number; base: number | null; body: Buffer }[];
    return rows.map(r => ({ ...r, body: keyframeText(r.flags, r.body) }));
  } finally {
    db.close();
  }
}

/** Writes recs twice, with and without the tier (same tiny object cache), and returns both. */
function writeBoth(recs: JournalRecord[], tier: JournalOptions, reopenAt?: number) {
  const base: JournalOptions = { keyframeEvery: 4, lastVersionCacheSize: 2, sync: "NORMAL" };
  return [
    { ...base, ...tier },
    { ...base, keyframeBodyCacheBytes: 0 },
  ].map(opts => {
    const tmp = tempJournalPath();
    let j = openJournal(tmp.path, opts);
    if (reopenAt === undefined) appendAll(j, recs);
    else {
      appendAll(j, recs.slice(0, reopenAt));
      // A restart forgets positions and bodies: misses then search the file and refill the tier.
      j.close();
      j = openJournal(tmp.path, opts);
      appendAll(j, recs.slice(reopenAt));
    }
    return { tmp, j, stats: j.stats() };
  });
}

describe("the writer's tier of keyframe bodies", () => {
  it.each<[string, JournalOptions, number | undefined]>([
    ["holding every body", {}, undefined],
    ["after a restart", {}, 90],
    ["with room for a few bodies", { keyframeBodyCacheBytes: 3 * 1500 }, undefined],
  ])("answers cache misses %s and stores what a writer without it stores", (_, tier, reopenAt) => {
    const recs = workload(240);
    const [withTier, without] = writeBoth(recs, tier, reopenAt);
    try {
      const a = withTier.stats;
      const b = without.stats;
      expect(a.cacheMisses).toBeGreaterThan(100);
      expect(a.keyframeBodies.hits).toBeGreaterThan(0);
      expect(b.keyframeBodies).toMatchObject({ entries: 0, bytes: 0, hits: 0 });
      expect(a.keyframeBodies.bytes).toBeLessThanOrEqual(a.keyframeBodies.budgetBytes);
      if (reopenAt === undefined && !tier.keyframeBodyCacheBytes) {
        // The tier holds every object's body: no miss reads the file.
        expect(a.keyframeBodies).toMatchObject({ entries: OBJECTS, misses: 0 });
        expect(a.keyframeBodies.hits).toBe(a.cacheMisses);
      } else {
        // Some misses read the file: after the restart by search, in the small tier by position.
        expect(a.keyframeBodies.hits).toBeLessThan(a.cacheMisses);
      }
      expect(a.cacheMisses).toBe(b.cacheMisses);
      // Same rows: every patch against the same keyframe, every body the same text.
      withTier.j.close();
      without.j.close();
      expect(storedRows(withTier.tmp.path)).toEqual(storedRows(without.tmp.path));
      const ja = openJournal(withTier.tmp.path);
      try {
        for (let obj = 0; obj < OBJECTS; obj++) {
          const written = recs.filter(r => r.resource?.name === `web-${obj}`).map(r => r.object);
          expect(ja.objectHistory(sel(obj)).map(r => r.object)).toEqual(written);
        }
        for (const i of [0, 37, 118, 200, 239]) {
          const obj = (i * 7 + (i >> 3)) % OBJECTS;
          expect(ja.objectAt(sel(obj), { time: at(i) }).record?.object).toEqual(recs[i].object);
        }
        expect(ja.fsck().ok).toBe(true);
      } finally {
        ja.close();
      }
    } finally {
      withTier.j.close();
      without.j.close();
      withTier.tmp.cleanup();
      without.tmp.cleanup();
    }
  });

  it("never diffs against a body kept before another writer appended", () => {
    const tmp = tempJournalPath();
    const opts: JournalOptions = { keyframeEvery: 2, lastVersionCacheSize: 1, sync: "NORMAL" };
    const a = openJournal(tmp.path, opts);
    const b = openJournal(tmp.path, opts);
    try {
      const recs = workload(120);
      appendAll(a, recs.slice(0, 60));
      const kept = a.stats().keyframeBodies;
      expect(kept.hits).toBeGreaterThan(0);
      expect(kept.entries).toBe(OBJECTS);
      // b stores newer versions, and with keyframeEvery 2 new keyframes, of every object.
      appendAll(b, recs.slice(60, 100));
      // a catches up: every body it kept names a keyframe that is no longer current.
      appendAll(a, recs.slice(100, 106), 6);
      const after = a.stats().keyframeBodies;
      expect(after.hits).toBe(kept.hits);
      expect(after.entries).toBeLessThanOrEqual(6);
      appendAll(a, recs.slice(106));
      for (let obj = 0; obj < OBJECTS; obj++) {
        const written = recs.filter(r => r.resource?.name === `web-${obj}`).map(r => r.object);
        expect(a.objectHistory(sel(obj)).map(r => r.object)).toEqual(written);
      }
      expect(a.fsck()).toMatchObject({ ok: true, problems: [] });
    } finally {
      a.close();
      b.close();
      tmp.cleanup();
    }
  });
});
