/**
 * One append transaction packed into a single ArrayBuffer, so the writer thread receives it as one
 * transfer instead of a structured clone of thousands of small arrays. The main thread packs while
 * it plans; the writer thread replays the ops through its own statements (writer-worker.ts).
 *
 * Layout (native byte order: both ends are threads of one process):
 *   header (32 bytes): f64 lastSeq, f64 maxObjectId, f64 maxStreamId, u32 op count, u32 MAGIC
 *   ops, each starting at a multiple of 8 with a tag byte:
 *   - a records row (RECORD/CONTROL, 88 bytes fixed): u8 tag, u8 kind bits, u32 event id bytes at +4,
 *     eight f64 at +8 (seq, type, stream, object, observed ms, watch, flags, base; NaN for null),
 *     u32 hash/rv/meta/body bytes at +72..+84, then the event id, hash, rv, meta and body bytes;
 *   - any other op: the tag, then its fields from +8 in order: a number as an aligned f64, a string
 *     as an aligned u32 byte count and its UTF-8 bytes.
 * Strings go in as UTF-8, which is what better-sqlite3 binds, so SQLite stores the same text whether
 * a string is bound here or there (a lone surrogate becomes U+FFFD either way).
 */

export const MAGIC = 0x4b545831; // "KTX1": a buffer that is not a packed transaction fails at once
export const HEADER = 32;
export const RECORD_FIXED = 88;

// Op tags.
export const RECORD = 1;
export const CONTROL = 2;
export const ADVANCE = 3;
export const BASELINE_DONE = 4;
export const SET_STATE = 5;
export const LAST_SEQ = 6;
export const BUCKET_TIME = 7;
export const INSERT_OBJECT = 8;
export const INSERT_STREAM = 9;
export const LEASE_RENEW = 10;

// Kind bits of a records row: which values are blobs, which are null.
export const ID_BLOB = 1;
export const HASH_BLOB = 2;
export const HASH_NULL = 4;
export const RV_NULL = 8;
export const META_NULL = 16;
export const BODY_NULL = 32;

/** What the main thread believed the file held when it planned the transaction. */
export interface TxnExpect {
  lastSeq: number;
  maxObjectId: number;
  maxStreamId: number;
}

/** The 13 values of a records row, in writerStatements().insertObject's column order. */
export type RecordRow = [
  seq: number,
  eventId: Buffer | string,
  type: number,
  stream: number,
  object: number | null,
  observedMs: number,
  watch: number | null,
  rv: string | null,
  flags: number,
  hash: Buffer | string | null,
  meta: string | null,
  body: Buffer | null,
  base: number | null,
];

/** The ops of a transaction; TxnBuilder (txn-pack.ts) packs them and applyTxn (txn-apply.ts) replays them in order. */
export interface TxnOps {
  record(...row: RecordRow): void;
  /** A control row that must not collide with a stored event id (the planner checked). */
  control(...row: RecordRow): void;
  advance(rv: string, observedAt: string, streamRow: number): void;
  baselineDone(seq: number, streamRow: number): void;
  setState(state: string, streamRow: number): void;
  lastSeq(value: string): void;
  bucketTime(k: number, minObserved: number): void;
  insertObject(
    id: number,
    clusterId: string,
    kind: string,
    namespace: string,
    name: string,
    grp: string,
  ): void;
  insertStream(
    id: number,
    streamId: string,
    clusterId: string,
    grp: string,
    version: string,
    resource: string,
    namespace: string,
    selector: string,
  ): void;
  /** Renews the recorder lease: fails unless meta[leaseKey] still names `instance`. */
  leaseRenew(leaseKey: string, instance: string, valueJson: string): void;
}

export const align8 = (n: number): number => (n + 7) & ~7;
