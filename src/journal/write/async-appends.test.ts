// Pipelined appends over the writer thread, against real journal files: what commits must be exactly
// what synchronous appends of the same batches store, through copies, evicted keyframes, a second
// writer, a refused record and synchronous writes in between.
import Database from "better-sqlite3";
import { eventRecord, type JournalRecord } from "../../event";
import { ENC_DEFLATE, ENC_KEYFRAME, ENC_MASK, ENC_PACK_LATER } from "../codec/codec";
import { openJournal, type Journal } from "../index";
import {
  at,
  checkpointsOf,
  deployment,
  streamKey,
  tempJournalPath,
} from "../../../test/support/journal-fixtures";

const stream = streamKey("deployments", "apps", "v1", "shop");

/** Batches of edits over `objects` deployments, seeded; a few events repeat an earlier one (copies). */
function batches(n: number, size: number, objects: number): JournalRecord[][] {
  let s = 7;
  const rand = () => (s = (s * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  const seen = new Set<number>();
  const out: JournalRecord[][] = [];
  let rv = 1;
  for (let b = 0; b < n; b++) {
    const batch: JournalRecord[] = [];
    for (let i = 0; i < size; i++) {
      const obj = Math.floor(rand() * objects);
      batch.push(
        eventRecord({
          stream,
          watchType: seen.has(obj) ? "MODIFIED" : "ADDED",
          object: deployment(`web-${obj}`, "shop", `u-${obj}`, rv++, Math.floor(rand() * 4)),
          observedAt: at(rv),
        }),
      );
      seen.add(obj);
    }
    if (b % 3 === 2) batch.push(batch[1], out[b - 1][0]);
    out.push(batch);
  }
  return out;
}

function allRecords(j: Journal): unknown[] {
  const out: unknown[] = [];
  let cursor: string | null = null;
  do {
    const page = j.events({ limit: 500, cursor: cursor ?? undefined });
    out.push(...page.records);
    cursor = page.nextCursor;
  } while (cursor);
  return out;
}

function syncCopy(bs: JournalRecord[][]): unknown[] {
  const ref = openJournal(tempJournalPath().path, { lastVersionCacheSize: 8, sync: "NORMAL" });
  try {
    for (const b of bs) ref.append({ records: b, checkpoints: checkpointsOf(b) });
    return allRecords(ref);
  } finally {
    ref.close();
  }
}

const threaded = (path: string) =>
  openJournal(path, { lastVersionCacheSize: 8, sync: "NORMAL", writerThread: true });

describe("appendAsync on the writer thread", () => {
  jest.setTimeout(60_000);

  it("stores what synchronous appends store, with several batches in flight", async () => {
    const bs = batches(12, 40, 30);
    const j = threaded(tempJournalPath().path);
    try {
      const results = await Promise.all(
        bs.map(b => j.appendAsync({ records: b, checkpoints: checkpointsOf(b) })),
      );
      // Batches commit in call order, one seq range after the other.
      for (let i = 1; i < results.length; i++)
        expect(results[i].firstSeq).toBe(results[i - 1].lastSeq! + 1);
      expect(results.reduce((n, r) => n + r.duplicates, 0)).toBeGreaterThan(0);
      expect(allRecords(j)).toEqual(syncCopy(bs));
    } finally {
      j.close();
    }
  });

  it("plans again on top of the file when another writer appended meanwhile", async () => {
    const bs = batches(6, 30, 20);
    const tmp = tempJournalPath();
    const j = threaded(tmp.path);
    const other = openJournal(tmp.path, { sync: "NORMAL" });
    try {
      await j.appendAsync({ records: bs[0], checkpoints: checkpointsOf(bs[0]) });
      // The other writer stores batch 1 first; the threaded writer's batch 1 is then all copies.
      other.append({ records: bs[1], checkpoints: checkpointsOf(bs[1]) });
      const rest = await Promise.all(
        bs.slice(1).map(b => j.appendAsync({ records: b, checkpoints: checkpointsOf(b) })),
      );
      expect(rest[0].appended).toBe(0);
      expect(allRecords(j)).toEqual(syncCopy(bs));
    } finally {
      other.close();
      j.close();
    }
  });

  it("refuses a bad batch alone: the batches around it commit", async () => {
    const bs = batches(5, 20, 10);
    const bad = [...bs[2]];
    bad[3] = { ...bad[3], eventId: "" };
    const j = threaded(tempJournalPath().path);
    try {
      const settled = await Promise.allSettled(
        [bs[0], bs[1], bad, bs[3], bs[4]].map(b =>
          j.appendAsync({ records: b, checkpoints: checkpointsOf(b) }),
        ),
      );
      expect(settled.map(s => s.status)).toEqual([
        "fulfilled",
        "fulfilled",
        "rejected",
        "fulfilled",
        "fulfilled",
      ]);
      expect((settled[2] as PromiseRejectedResult).reason).toMatchObject({ code: "INVALID" });
      expect(allRecords(j)).toEqual(syncCopy([bs[0], bs[1], bs[3], bs[4]]));
    } finally {
      j.close();
    }
  });

  it("lets batches in flight finish before a synchronous write", async () => {
    const bs = batches(6, 30, 20);
    const tmp = tempJournalPath();
    const j = threaded(tmp.path);
    try {
      const pending = bs
        .slice(0, 5)
        .map(b => j.appendAsync({ records: b, checkpoints: checkpointsOf(b) }));
      // Not awaited: append waits for the thread, then writes on top of every batch before it.
      const last = j.append({ records: bs[5], checkpoints: checkpointsOf(bs[5]) });
      const before = await Promise.all(pending);
      expect(last.firstSeq).toBe(before[4].lastSeq! + 1);
      expect(allRecords(j)).toEqual(syncCopy(bs));
    } finally {
      j.close();
    }
    // The thread's commits are durable in the file itself, not only visible to this process.
    const db = new Database(tmp.path, { readonly: true });
    try {
      expect(db.prepare("SELECT count(*) FROM records").pluck().get()).toBe(
        bs.flat().length - 2 * 2,
      );
      // Bodies the plan left raw were deflated by the thread, and the mark never reaches the file.
      const count = (where: string) =>
        db.prepare(`SELECT count(*) FROM records WHERE ${where}`).pluck().get();
      expect(count(`flags & ${ENC_PACK_LATER}`)).toBe(0);
      expect(
        count(`(flags & ${ENC_MASK}) = ${ENC_KEYFRAME} AND flags & ${ENC_DEFLATE}`),
      ).toBeGreaterThan(0);
    } finally {
      db.close();
    }
  });

  it("keeps to a byte budget: the thread's connection gets its limits and prunes make room", async () => {
    const tmp = tempJournalPath();
    const budget = 1_000_000;
    const j = openJournal(tmp.path, {
      retention: { maxBytes: budget },
      keyframeEvery: 8,
      sync: "NORMAL",
      writerThread: true,
    });
    try {
      const bs = batches(60, 100, 40).map(b =>
        b.map(r => {
          const o = structuredClone(r.object!);
          o.metadata.annotations = { churn: `${r.resource!.resourceVersion}`.repeat(30) };
          return { ...r, object: o, objectHash: undefined };
        }),
      );
      let maxSize = 0;
      for (let i = 0; i < bs.length; i += 3) {
        await Promise.all(
          bs.slice(i, i + 3).map(b => j.appendAsync({ records: b, checkpoints: checkpointsOf(b) })),
        );
        maxSize = Math.max(maxSize, j.sizeBytes());
      }
      expect(maxSize).toBeLessThanOrEqual(budget * 1.1);
      expect(j.events({ types: ["pruned"] }).records.length).toBeGreaterThan(0);
      expect(j.fsck()).toMatchObject({ ok: true, problems: [] });
    } finally {
      j.close();
    }
  });

  it("fails the batches in flight when the thread dies, then appends on the main thread", async () => {
    const bs = batches(6, 30, 20);
    const j = threaded(tempJournalPath().path);
    try {
      await j.appendAsync({ records: bs[0], checkpoints: checkpointsOf(bs[0]) });
      // The thread ends under the journal, as when its isolate runs out of memory.
      const internals = j as unknown as {
        async: { thread: { worker: { terminate(): Promise<number> } } };
      };
      await internals.async.thread.worker.terminate();
      const settled = await Promise.allSettled(
        bs.slice(1, 4).map(b => j.appendAsync({ records: b, checkpoints: checkpointsOf(b) })),
      );
      for (const s of settled)
        expect(s).toMatchObject({ status: "rejected", reason: { code: "IO" } });
      expect(j.writerThreadStatus()).toMatchObject({ state: "failed" });
      // Nothing of theirs reached the file, and later batches go on without the thread.
      for (const b of [...bs.slice(1, 4), ...bs.slice(4)])
        await j.appendAsync({ records: b, checkpoints: checkpointsOf(b) });
      expect(allRecords(j)).toEqual(syncCopy(bs));
      // The journal says the thread ended, and why, once it went back to the main thread.
      expect(j.writerThreadStatus()).toEqual({
        state: "failed",
        reason: expect.stringMatching(/^it ended: the journal's writer thread exited/),
      });
    } finally {
      j.close();
    }
  });
});
