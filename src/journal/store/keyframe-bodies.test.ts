import Database from "better-sqlite3";
import fc from "fast-check";
import { ENTRY_OVERHEAD_BYTES, KeyframeBodies } from "./keyframe-bodies";
import { tempJournalPath } from "../../../test/support/journal-fixtures";

/** A body of n bytes, its own block (as better-sqlite3 hands them out), filled with a mark. */
const body = (n: number, mark = 7) => Buffer.alloc(n, mark);
const cost = (n: number) => n + ENTRY_OVERHEAD_BYTES;

describe("KeyframeBodies", () => {
  it("answers a body only for the keyframe seq it was kept for, and drops one of an older keyframe", () => {
    const t = new KeyframeBodies(1 << 20);
    t.set(1, 100, 5, body(10, 1));
    expect(t.get(1, 100)).toEqual({ seq: 100, flags: 5, body: body(10, 1) });
    // The KeyframeTable names a newer keyframe: the kept body is stale, never an answer.
    expect(t.get(1, 250)).toBeUndefined();
    expect(t.size).toBe(0);
    expect(t.bytes).toBe(0);
    expect(t.get(1, 100)).toBeUndefined();
    expect(t.get(2, 100)).toBeUndefined();
    expect({ hits: t.hits, misses: t.misses }).toEqual({ hits: 1, misses: 3 });
  });

  it("replaces an object's body with its newer keyframe's", () => {
    const t = new KeyframeBodies(1 << 20);
    t.set(1, 100, 5, body(10, 1));
    t.set(1, 300, 1, body(20, 2));
    expect(t.size).toBe(1);
    expect(t.bytes).toBe(cost(20));
    expect(t.get(1, 100)).toBeUndefined();
    t.set(1, 300, 1, body(20, 2));
    expect(t.get(1, 300)?.body).toEqual(body(20, 2));
  });

  it("stays within its byte budget, evicting least recently used first", () => {
    const t = new KeyframeBodies(3 * cost(100));
    for (const id of [1, 2, 3]) t.set(id, id, 0, body(100));
    expect(t.bytes).toBe(3 * cost(100));
    expect(t.get(1, 1)).toBeDefined(); // 1 is young again, 2 is the oldest
    t.set(4, 4, 0, body(100));
    expect(t.get(2, 2)).toBeUndefined();
    expect([1, 3, 4].map(id => t.get(id, id) !== undefined)).toEqual([true, true, true]);
    // One big body pushes out as many old ones as it needs.
    t.set(5, 5, 0, body(2 * cost(100) - ENTRY_OVERHEAD_BYTES));
    expect(t.size).toBe(2);
    expect(t.bytes).toBeLessThanOrEqual(t.budgetBytes);
    // A body larger than the whole budget is not kept, and nothing is evicted for it.
    t.set(6, 6, 0, body(3 * cost(100)));
    expect(t.get(6, 6)).toBeUndefined();
    expect(t.size).toBe(2);
  });

  it("keeps nothing with a budget of 0", () => {
    const t = new KeyframeBodies(0);
    t.set(1, 1, 0, body(1));
    expect(t.get(1, 1)).toBeUndefined();
    expect({ size: t.size, bytes: t.bytes }).toEqual({ size: 0, bytes: 0 });
  });

  it("never holds more bytes than its budget, and its count matches what it keeps", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 5000 }),
        fc.array(fc.tuple(fc.integer({ min: 1, max: 20 }), fc.integer({ min: 0, max: 2000 })), {
          maxLength: 200,
        }),
        (budget, sets) => {
          const t = new KeyframeBodies(budget);
          const last = new Map<number, number>();
          sets.forEach(([id, n], seq) => {
            t.set(id, seq, 0, body(n));
            last.set(id, seq);
            expect(t.bytes).toBeLessThanOrEqual(budget);
          });
          let kept = 0;
          let bytes = 0;
          for (const [id, seq] of last) {
            const e = t.get(id, seq);
            if (e === undefined) continue;
            kept++;
            bytes += cost(e.body.length);
          }
          expect(kept).toBe(t.size);
          expect(bytes).toBe(t.bytes);
          t.clear();
          expect({ size: t.size, bytes: t.bytes }).toEqual({ size: 0, bytes: 0 });
        },
      ),
    );
  });

  it("copies a body that is a view into a shared pool, so the tier never keeps the pool alive", () => {
    const t = new KeyframeBodies(1 << 20);
    // A short Buffer.from lands in Node's shared 8 KiB allocation pool.
    const pooled = Buffer.from("a short keyframe body");
    expect(pooled.buffer.byteLength).toBeGreaterThan(pooled.length);
    t.set(1, 1, 0, pooled);
    const kept = t.get(1, 1)!.body;
    expect(kept.byteOffset).toBe(0);
    expect(kept.buffer.byteLength).toBe(pooled.length);
    expect(kept.buffer).not.toBe(pooled.buffer);
    pooled.fill(0); // the pool's next user overwrites it: the kept copy does not change
    expect(kept.toString()).toBe("a short keyframe body");
  });

  it("keeps a better-sqlite3 blob as it is: it comes in a block of its own", () => {
    const tmp = tempJournalPath();
    const db = new Database(tmp.path);
    try {
      db.exec("CREATE TABLE t (body BLOB)");
      db.prepare("INSERT INTO t VALUES (?)").run(Buffer.from("short blob"));
      db.prepare("INSERT INTO t VALUES (?)").run(body(3000));
      const t = new KeyframeBodies(1 << 20);
      const rows = db.prepare("SELECT body FROM t").raw().all() as [Buffer][];
      rows.forEach(([b], i) => {
        expect(b.byteOffset).toBe(0);
        expect(b.buffer.byteLength).toBe(b.length);
        t.set(i, i, 0, b);
        expect(t.get(i, i)!.body).toBe(b);
      });
    } finally {
      db.close();
      tmp.cleanup();
    }
  });
});
