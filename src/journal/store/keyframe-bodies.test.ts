import Database from "better-sqlite3";
import fc from "fast-check";
import { KeyframeBodies, RECORD_HEADER_BYTES, SLOT_BYTES } from "./keyframe-bodies";
import { tempJournalPath } from "../../../test/support/journal-fixtures";

/** A body of n bytes filled with a mark. */
const body = (n: number, mark = 7) => Buffer.alloc(n, mark);
/** The ring's size for a budget: the rest after the index's quarter, if that holds an entry at all. */
const ringBytes = (budget: number) =>
  Math.floor(budget / 4) >= SLOT_BYTES ? budget - Math.floor(budget / 4) : 0;
/** A budget whose ring holds exactly `records` records of n-byte bodies (n >= 500: room in the index). */
const budgetFor = (records: number, n: number) => (4 * records * (n + RECORD_HEADER_BYTES)) / 3;

describe("KeyframeBodies", () => {
  it("answers a body only for the keyframe seq it was kept for, and drops one of an older keyframe", () => {
    const t = new KeyframeBodies(1 << 20);
    t.set(1, 100, 5, body(10, 1));
    expect(t.get(1, 100)).toEqual({ seq: 100, flags: 5, body: body(10, 1) });
    // The KeyframeTable names a newer keyframe: the kept body is stale, never an answer.
    expect(t.get(1, 250)).toBeUndefined();
    expect(t.size).toBe(0);
    expect(t.get(1, 100)).toBeUndefined();
    expect(t.get(2, 100)).toBeUndefined();
    expect({ hits: t.hits, misses: t.misses }).toEqual({ hits: 1, misses: 3 });
  });

  it("replaces an object's body with its newer keyframe's", () => {
    const t = new KeyframeBodies(1 << 20);
    t.set(1, 100, 5, body(10, 1));
    t.set(1, 300, 1, body(20, 2));
    expect(t.size).toBe(1);
    expect(t.get(1, 100)).toBeUndefined();
    t.set(1, 300, 1, body(20, 2));
    expect(t.get(1, 300)).toEqual({ seq: 300, flags: 1, body: body(20, 2) });
    // Both older records still take ring space until the head comes round to them.
    expect(t.bytes).toBe(3 * RECORD_HEADER_BYTES + 50 + SLOT_BYTES);
  });

  it("evicts the oldest records to make room, and keeps a body read while old", () => {
    const t = new KeyframeBodies(budgetFor(3, 1000));
    for (const id of [1, 2, 3]) t.set(id, id, 0, body(1000, id));
    expect(t.bytes).toBe(3 * (1000 + RECORD_HEADER_BYTES) + 3 * SLOT_BYTES);
    expect(t.bytes).toBeLessThanOrEqual(t.budgetBytes);
    // 1 is the oldest; read, it moves to the head, and 2 is the oldest then.
    expect(t.get(1, 1)?.body).toEqual(body(1000, 1));
    t.set(4, 4, 0, body(1000, 4));
    expect(t.size).toBe(3);
    expect(t.get(2, 2)).toBeUndefined();
    // Newest first: a read moves a body to the head, which evicts the oldest.
    for (const id of [4, 3, 1]) expect(t.get(id, id)?.body).toEqual(body(1000, id));
    // A body larger than the whole ring is not kept.
    t.set(6, 6, 0, body(4000));
    expect(t.get(6, 6)).toBeUndefined();
  });

  it("keeps nothing with a budget of 0", () => {
    const t = new KeyframeBodies(0);
    t.set(1, 1, 0, body(1));
    expect(t.get(1, 1)).toBeUndefined();
    expect({ size: t.size, bytes: t.bytes }).toEqual({ size: 0, bytes: 0 });
  });

  it("answers only the body last kept for an id and seq, wraps its ring, and stays within budget", () => {
    type Op = { get: boolean; id: number; n: number };
    const op = fc.record({
      get: fc.boolean(),
      id: fc.integer({ min: 1, max: 12 }),
      n: fc.integer({ min: 0, max: 700 }),
    });
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 9000 }),
        fc.array(op, { maxLength: 300 }),
        (budget, ops: Op[]) => {
          const t = new KeyframeBodies(budget);
          const last = new Map<number, { seq: number; body: Buffer }>();
          ops.forEach(({ get, id, n }, seq) => {
            if (get) {
              const want = last.get(id);
              const got = want && t.get(id, want.seq);
              // Either evicted, or exactly the body kept last for that keyframe.
              if (got) expect({ seq: got.seq, body: got.body }).toEqual(want);
            } else {
              const b = body(n, seq % 251);
              t.set(id, seq, seq % 7, b);
              last.set(id, { seq, body: b });
              // What was kept last is always there, unless it cannot fit at all.
              const got = t.get(id, seq);
              if (got) expect(got).toEqual({ seq, flags: seq % 7, body: b });
              else expect(RECORD_HEADER_BYTES + n).toBeGreaterThan(ringBytes(budget));
            }
            expect(t.bytes).toBeLessThanOrEqual(budget);
            expect(t.size).toBeLessThanOrEqual(last.size);
          });
          t.clear();
          expect({ size: t.size, bytes: t.bytes }).toEqual({ size: 0, bytes: 0 });
        },
      ),
      { numRuns: 300 },
    );
  });

  it("keeps every body when the budget holds them all", () => {
    const t = new KeyframeBodies(1 << 20);
    for (let id = 1; id <= 500; id++) t.set(id, id * 2, 1, body(300 + (id % 50), id % 251));
    for (let id = 1; id <= 500; id++)
      expect(t.get(id, id * 2)?.body).toEqual(body(300 + (id % 50), id % 251));
    expect(t.size).toBe(500);
  });

  it("copies what it is given: a view into Node's shared pool, or a better-sqlite3 blob", () => {
    const tmp = tempJournalPath();
    const db = new Database(tmp.path);
    try {
      db.exec("CREATE TABLE t (body BLOB)");
      db.prepare("INSERT INTO t VALUES (?)").run(Buffer.from("a keyframe body from SQLite"));
      const [blob] = db.prepare("SELECT body FROM t").raw().get() as [Buffer];
      // better-sqlite3 hands a blob out in a memory block of its own; a short Buffer.from is a view
      // into the shared 8 KiB pool. Neither may be kept as it is (the ring's class comment says why).
      expect(blob.buffer.byteLength).toBe(blob.length);
      const pooled = Buffer.from("a short keyframe body");
      expect(pooled.buffer.byteLength).toBeGreaterThan(pooled.length);
      const t = new KeyframeBodies(1 << 20);
      t.set(1, 1, 0, pooled);
      t.set(2, 2, 0, blob);
      pooled.fill(0); // the pool's next user overwrites it
      blob.fill(0);
      expect(t.get(1, 1)!.body.toString()).toBe("a short keyframe body");
      expect(t.get(2, 2)!.body.toString()).toBe("a keyframe body from SQLite");
      expect(t.get(1, 1)!.body.buffer).not.toBe(pooled.buffer);
    } finally {
      db.close();
      tmp.cleanup();
    }
  });
});
