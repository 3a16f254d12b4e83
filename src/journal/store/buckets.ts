// Reads through the object index, which is keyed by (seq bucket, object) (schema v5). Rows of one
// object are found bucket by bucket: newest first for "the version at T", all at once (BUCKETS_CTE)
// for a history. bucket_times (schema v6) lets a look-up "as of T" skip buckets observed later.
import type Database from "better-sqlite3";
import { OBJECT_BUCKET_SHIFT } from "./schema";

type Bounds = { lo: number | null; hi: number | null };

/** Bucket arithmetic and probing over one connection. */
export class ObjectBuckets {
  private readonly seqBounds: Database.Statement;

  constructor(
    private readonly db: Database.Database,
    private readonly prep: (sql: string) => Database.Statement,
  ) {
    // Each subquery is one B-tree descent; together they cost one call.
    this.seqBounds = db.prepare(
      "SELECT (SELECT min(seq) FROM records) AS lo, (SELECT max(seq) FROM records) AS hi",
    );
  }

  /** Forgets cached bucket times (after a rolled-back transaction). */
  forget(): void {
    this.settledBelow = 0;
  }

  /**
   * The index buckets that can hold rows with seqs in [minSeq, maxSeq], clipped to the rows
   * stored; null when there are none. Pass them to a BUCKETS_CTE statement as its first two values.
   */
  range(minSeq: number, maxSeq: number): [number, number] | null {
    const r = this.pinnedBounds ?? (this.seqBounds.get() as Bounds);
    if (r.lo === null || r.hi === null) return null;
    const lo = Math.max(minSeq, r.lo);
    const hi = Math.min(maxSeq, r.hi);
    return hi < lo ? null : [lo >> OBJECT_BUCKET_SHIFT, hi >> OBJECT_BUCKET_SHIFT];
  }

  private pinnedBounds: Bounds | null = null;

  /**
   * Runs fn in one read transaction with the stored seq range read once, for callers that look up
   * thousands of objects: the range query would otherwise run once per object. Inside the
   * transaction the range cannot change, so the pinned answer stays exact.
   */
  withPinnedRange<T>(fn: () => T): T {
    if (this.pinnedBounds) return fn();
    return this.db.transaction(() => {
      this.pinnedBounds = this.seqBounds.get() as Bounds;
      try {
        return fn();
      } finally {
        this.pinnedBounds = null;
      }
    })();
  }

  /**
   * Probes the object index bucket by bucket, newest first, from the bucket holding maxSeq down to
   * the oldest stored row, and returns the first answer probe gives. Rows of one object within a
   * bucket come in seq order, so a probe for "newest matching row" needs only its own bucket, and
   * the search stops at the first bucket that has one. With observedBy, settled buckets whose
   * rows were all observed later than it are not probed.
   */
  newest<T>(
    maxSeq: number,
    probe: (bucket: number) => T | undefined,
    observedBy?: number,
  ): T | undefined {
    const range = this.range(0, maxSeq);
    if (!range) return undefined;
    for (let b = range[1]; b >= range[0]; b--) {
      if (observedBy !== undefined && this.startsAfter(b, range[1], observedBy)) continue;
      const r = probe(b);
      if (r !== undefined) return r;
    }
    return undefined;
  }

  // Earliest object-row time of each bucket below settledBelow. Rows only ever get higher seqs,
  // so once the newest row is in a later bucket a bucket's minimum no longer changes.
  private settledMins: (number | undefined)[] = [];
  private settledBelow = 0;

  /** Whether every object row of bucket b was observed after atMs (so a look-up "as of atMs" skips it). */
  private startsAfter(b: number, newest: number, atMs: number): boolean {
    // The newest bucket may still take rows with earlier times, so it is always probed.
    if (b >= newest) return false;
    if (b >= this.settledBelow) {
      this.settledMins = [];
      for (const r of this.prep("SELECT k, min_observed FROM bucket_times WHERE k < ?").all(
        newest,
      ) as { k: number; min_observed: number }[])
        this.settledMins[r.k] = r.min_observed;
      this.settledBelow = newest;
    }
    const m = this.settledMins[b];
    return m !== undefined && m > atMs;
  }
}
