// The object index is keyed by (seq bucket, object), so every read of an object's rows probes
// bucket by bucket. These tests spread one object's versions over three buckets (2^15 seqs each)
// with filler records in between, and check every reader and the writer's own look-ups across them.
import Database from "better-sqlite3";
import { eventRecord, streamIdOf, type JournalRecord } from "../../event";
import { openJournal, openJournalView, type Journal } from "../index";
import { OBJECT_BUCKET_SHIFT, SCHEMA_VERSION } from "./schema";
import {
  at,
  checkpointsOf,
  configMap,
  deployment,
  streamKey,
  tempJournalPath,
} from "../../../test/support/journal-fixtures";

const deployments = streamKey("deployments", "apps", "v1");
const configmaps = streamKey("configmaps");
const sel = { clusterId: "test", kind: "Deployment", namespace: "shop", name: "web" };
const BUCKET = 1 << OBJECT_BUCKET_SHIFT;

let clock = 0;
let rv = 1;
const early = eventRecord({
  stream: streamKey("configmaps"),
  watchType: "ADDED",
  object: configMap("early", "shop", "u-early", 1, { a: "1" }),
  observedAt: at(-100),
});
const cp = checkpointsOf;
const web = (ready: number): JournalRecord => {
  const n = ++rv;
  return eventRecord({
    stream: deployments,
    watchType: n === 2 ? "ADDED" : "MODIFIED",
    object: deployment("web", "shop", "u-web", n, ready),
    observedAt: at(++clock),
  });
};
function fill(j: Journal, count: number): void {
  for (let done = 0; done < count; done += 5000) {
    const recs: JournalRecord[] = [];
    for (let i = 0; i < Math.min(5000, count - done); i++) {
      const n = ++rv;
      recs.push(
        eventRecord({
          stream: configmaps,
          watchType: "MODIFIED",
          object: configMap(`f-${i % 500}`, "fill", `u-f-${i % 500}`, n, { v: String(n) }),
          observedAt: at(clock),
        }),
      );
    }
    clock++;
    j.append({ records: recs, checkpoints: cp(recs) });
  }
}

describe("object rows spread over several index buckets", () => {
  const tmp = tempJournalPath();
  const written: JournalRecord[] = [];
  const times: string[] = [];
  let j: Journal;

  beforeAll(() => {
    j = openJournal(tmp.path, {});
    const put = (rec: JournalRecord) => {
      j.append({ records: [rec], checkpoints: cp([rec]) });
      written.push(rec);
      times.push(rec.observedAt);
    };
    put(web(1));
    put(web(2));
    // Observed before everything else yet stored in the first bucket, which later fills settle.
    j.append({ records: [early], checkpoints: cp([early]) });
    fill(j, BUCKET + 1000);
    put(web(3));
    fill(j, BUCKET + 1000);
    put(web(0));
    // A restart empties the writer's cache, so the next append must find its keyframe on disk.
    j.close();
    j = openJournal(tmp.path, {});
    put(web(2));
  }, 120_000);

  afterAll(() => {
    j.close();
    tmp.cleanup();
  });

  it("really spans three buckets", () => {
    const seqs = j.objectHistory(sel).map(r => r.ingestSeq!);
    expect(new Set(seqs.map(s => s >> OBJECT_BUCKET_SHIFT)).size).toBe(3);
  });

  it("objectHistory returns every version in order", () => {
    const h = j.objectHistory(sel);
    expect(h.map(r => r.object)).toEqual(written.map(r => r.object));
    expect(h.map(r => r.resource!.resourceVersion)).toEqual(
      written.map(r => r.resource!.resourceVersion),
    );
  });

  it("pages one object's events through the index in ingest order, filters applied", () => {
    const seqs = j.objectHistory(sel).map(r => r.ingestSeq!);
    const paged: number[] = [];
    let cursor: string | undefined;
    do {
      const page = j.events({
        kind: "Deployment",
        namespace: "shop",
        name: "web",
        limit: 2,
        cursor,
      });
      expect(page.records.length).toBeLessThanOrEqual(2);
      paged.push(...page.records.map(r => r.ingestSeq!));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(paged).toEqual(seqs);
    // Time, stream and cluster filters still hold on this path, and the objects come back whole.
    const late = j.events({ ...sel, since: times[2] });
    expect(late.records.map(r => r.object)).toEqual(written.slice(2).map(r => r.object));
    expect(j.events({ ...sel, streamId: streamIdOf(configmaps) }).records).toEqual([]);
    expect(j.events({ ...sel, clusterId: "other" }).records).toEqual([]);
    // Five hundred filler objects match a namespace, past the indexed path: a scan pages them.
    const fillers = j.events({ kind: "ConfigMap", namespace: "fill", limit: 3 });
    expect(fillers.records.map(r => r.resource!.namespace)).toEqual(["fill", "fill", "fill"]);
    expect(fillers.nextCursor).not.toBeNull();
  });

  it("objectAt by time and by resourceVersion finds versions in older buckets", () => {
    for (let i = 0; i < written.length; i++) {
      const byTime = j.objectAt(sel, { time: times[i] });
      expect(byTime.record?.object).toEqual(written[i].object);
      const byRv = j.objectAt(sel, {
        streamId: streamIdOf(deployments),
        resourceVersion: written[i].resource!.resourceVersion,
      });
      expect(byRv.record?.object).toEqual(written[i].object);
    }
  });

  it("objectAt by resourceVersion for an object never recorded answers, rather than failing", () => {
    const r = j.objectAt(
      { ...sel, name: "never-seen" },
      { streamId: streamIdOf(deployments), resourceVersion: written[0].resource!.resourceVersion },
    );
    expect(r.record).toBeNull();
    expect(r.exists).toBe(false);
  });

  it("a look-up as of a time skips only buckets whose rows all came later", () => {
    const earlySel = { clusterId: "test", kind: "ConfigMap", namespace: "shop", name: "early" };
    expect(j.objectAt(earlySel, { time: at(-50) }).record?.object).toEqual(early.object);
    expect(j.objectAt(sel, { time: at(-50) }).record).toBeNull();
    expect(j.objectAt(sel, { time: at(-50) }).exists).toBe(false);
  });

  it("a redelivered old version is still recognised as a copy, by the look-up across buckets", () => {
    // Copies come only from a stream's resume point onward (src/journal/write/dedup.ts). Right after
    // a restart the window is empty and the stream resumes before it, so every record of it takes
    // the exact look-up until its first checkpoint: that look-up must find a copy in any bucket.
    j.close();
    j = openJournal(tmp.path, {});
    const before = j.stats().records;
    const r = j.append({ records: [written[0]], checkpoints: [] });
    expect(r).toMatchObject({ appended: 0, duplicates: 1 });
    expect(j.stats().records).toBe(before);
  });

  it("bulk positions and a separate view see the object at each time", () => {
    const view = openJournalView(tmp.path);
    try {
      for (let i = 0; i < written.length; i++) {
        for (const v of [j, view]) {
          const positions = v.positionsAt("test", Date.parse(times[i]));
          const web = positions.find(p => p.identity.name === "web")!;
          expect(v.records([web])[0].object).toEqual(written[i].object);
          expect(v.record(web).object).toEqual(written[i].object);
        }
      }
      const identity = view.objects("test", "shop").find(o => o.name === "web")!;
      expect(view.streamsOfObject(identity)).toEqual([streamIdOf(deployments)]);
    } finally {
      view.close();
    }
  });

  it("fsck passes", () => {
    expect(j.fsck().ok).toBe(true);
  });
});

describe("object index migrations", () => {
  /** The file's object-index SQL and bucket times, after checking it reached SCHEMA_VERSION. */
  function layout(path: string): { sql: string; times: unknown[] } {
    const check = new Database(path, { readonly: true });
    try {
      expect(check.pragma("user_version", { simple: true })).toBe(SCHEMA_VERSION);
      // v8's name index over object identities is built for files that predate it.
      expect(
        check.prepare("SELECT 1 FROM sqlite_master WHERE name='objects_name'").pluck().get(),
      ).toBe(1);
      const sql = check
        .prepare("SELECT sql FROM sqlite_master WHERE name='records_object'")
        .pluck()
        .get() as string;
      const times = check.prepare("SELECT k, min_observed FROM bucket_times ORDER BY k").all();
      return { sql, times };
    } finally {
      check.close();
    }
  }

  /**
   * Runs test on a journal of three versions of one object whose file setup rewrote into an older
   * schema; the journal is then reopened (and so migrated) by test itself.
   */
  function withOldFile(
    setup: string,
    test: (path: string, recs: JournalRecord[], objectSeqs: number[]) => void,
  ): void {
    const tmp = tempJournalPath();
    try {
      const j = openJournal(tmp.path, {});
      const recs = [web(1), web(2), web(3)];
      for (const r of recs) j.append({ records: [r], checkpoints: cp([r]) });
      j.close();
      const db = new Database(tmp.path);
      db.exec(setup);
      const seqs = db
        .prepare("SELECT seq FROM records WHERE object IS NOT NULL ORDER BY seq")
        .pluck()
        .all() as number[];
      db.close();
      test(tmp.path, recs, seqs);
    } finally {
      tmp.cleanup();
    }
  }

  it("rebuilds the object index of a v4 file and reads it back", () => {
    withOldFile(
      `DROP INDEX records_object;
        DROP TABLE bucket_times;
        DROP INDEX objects_name;
        CREATE INDEX records_object ON records(object) WHERE object IS NOT NULL;
        PRAGMA user_version = 4;`,
      (path, recs) => {
        const j = openJournal(path, {});
        expect(j.objectHistory(sel).map(r => r.object)).toEqual(recs.map(r => r.object));
        j.close();
        const { sql, times } = layout(path);
        expect(sql).toContain(`seq >> ${OBJECT_BUCKET_SHIFT}`);
        // v6 fills each bucket's earliest object-row time from the rows already stored.
        expect(times).toEqual([{ k: 0, min_observed: Date.parse(recs[0].observedAt) }]);
      },
    );
  });

  it("moves a v6 file from 2^15-row buckets to the current ones, bucket times included", () => {
    // Spread the rows over three buckets of the current size, then lay the file out as v6 did.
    withOldFile(
      `UPDATE records SET seq = seq + ${BUCKET} * (seq - 1) WHERE object IS NOT NULL;
        DROP INDEX records_object;
        CREATE INDEX records_object ON records(seq >> 15, object) WHERE object IS NOT NULL;
        DELETE FROM bucket_times;
        INSERT INTO bucket_times (k, min_observed)
          SELECT seq >> 15, min(observed_at) FROM records WHERE object IS NOT NULL GROUP BY 1;
        UPDATE meta SET value = (SELECT max(seq) FROM records) WHERE key = 'last_seq';
        DROP INDEX objects_name;
        PRAGMA user_version = 6;`,
      (path, recs, seqs) => {
        const j = openJournal(path, {});
        expect(j.objectHistory(sel).map(r => r.object)).toEqual(recs.map(r => r.object));
        expect(j.objectAt(sel, { time: recs[1].observedAt }).record?.object).toEqual(
          recs[1].object,
        );
        expect(j.fsck().problems).toEqual([]);
        j.close();
        const { sql, times } = layout(path);
        expect(sql).toContain(`seq >> ${OBJECT_BUCKET_SHIFT}`);
        expect(times).toEqual(
          seqs.map((s, i) => ({
            k: s >> OBJECT_BUCKET_SHIFT,
            min_observed: Date.parse(recs[i].observedAt),
          })),
        );
      },
    );
  });
});

describe("bucket times of a batch that crosses a bucket boundary", () => {
  const tmp = tempJournalPath();

  it("records the earliest observation of each bucket the batch writes into", () => {
    const j = openJournal(tmp.path, {});
    const cm = (name: string, n: number, t: number) =>
      eventRecord({
        stream: configmaps,
        watchType: "ADDED",
        object: configMap(name, "edge", `u-${name}`, n, { v: String(n) }),
        observedAt: at(t),
      });
    // Fill the first bucket up to three seqs short of its end, observed at time 100.
    const filler: JournalRecord[] = [];
    for (let i = 0; i < BUCKET - 3; i++) filler.push(cm(`f-${i}`, i + 1, 100));
    j.append({ records: filler, checkpoints: cp(filler) });
    // One batch: two rows close the first bucket, three open the second, observed at 200..204.
    const batch = [0, 1, 2, 3, 4].map(i => cm(`b-${i}`, BUCKET + i, 200 + i));
    const r = j.append({ records: batch, checkpoints: cp(batch) });
    j.close();
    expect(r.firstSeq! >> OBJECT_BUCKET_SHIFT).toBe(0);
    expect(r.lastSeq! >> OBJECT_BUCKET_SHIFT).toBe(1);
    const db = new Database(tmp.path, { readonly: true });
    try {
      const times = db.prepare("SELECT k, min_observed FROM bucket_times ORDER BY k").all();
      const firstInSecond = batch[(BUCKET - r.firstSeq!) as number];
      expect(times).toEqual([
        { k: 0, min_observed: Date.parse(at(100)) },
        { k: 1, min_observed: Date.parse(firstInSecond.observedAt) },
      ]);
      expect(firstInSecond.observedAt).toBe(at(202));
    } finally {
      db.close();
    }
  });
});
