// Where the writes of a planned append go. The plan (append.ts) decides every row; a TxnWrites
// stores them: straight into the transaction open on the writer's connection (InlineWrites), or
// packed for the writer thread, which runs the whole transaction on its own connection while this
// thread plans the next batch (packed-writes.ts). Reads the plan needs to rule out copies and to
// prove checkpoints go through the same object, because only it knows what is written but not yet
// visible.
import type Database from "better-sqlite3";
import type { CodecOptions } from "../codec/codec";
import type { RecordRow } from "./txn-format";
import { AUDIT_CODE, OBJECT_BUCKET } from "../store/schema";
import type { Store } from "../store/store";

/** Prepared statements for the append path. */
export function writerStatements(db: Database.Database) {
  return {
    // Object rows are checked for copies before they are encoded; other rows rely on the index.
    insertObject: db.prepare(
      `INSERT INTO records (seq, event_id, type, stream, object, observed_at, watch, rv, flags, hash, meta, body, base)
       VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)`,
    ),
    insertControl: db.prepare(
      `INSERT INTO records (seq, event_id, type, stream, object, observed_at, watch, rv, flags, hash, meta, body, base)
       VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(event_id) WHERE object IS NULL AND type != ${AUDIT_CODE} DO NOTHING`,
    ),
    // Audit rows are checked for copies through records_audit (their event's stream and time).
    auditCopy: db.prepare(
      `SELECT 1 FROM records WHERE type=${AUDIT_CODE} AND object IS NULL AND stream=? AND observed_at=? AND event_id=? LIMIT 1`,
    ),
    // Copies are usually recent, so the newest rows are compared first.
    objectCopy: db.prepare(
      `SELECT 1 FROM records WHERE ${OBJECT_BUCKET}=? AND object=? AND event_id=? ORDER BY seq DESC LIMIT 1`,
    ),
    controlRv: db.prepare(
      "SELECT 1 FROM records WHERE object IS NULL AND stream=? AND rv=? LIMIT 1",
    ),
    lastRv: db.prepare("SELECT last_rv FROM streams WHERE id=?"),
    recentRv: db.prepare("SELECT 1 FROM records WHERE seq > ? AND stream=? AND rv=? LIMIT 1"),
    advance: db.prepare("UPDATE streams SET last_rv=?, last_observed_at=? WHERE id=?"),
    baselineDone: db.prepare(
      "UPDATE streams SET last_baseline_seq=?, state=CASE WHEN state='degraded' THEN 'active' ELSE state END WHERE id=?",
    ),
    setState: db.prepare("UPDATE streams SET state=? WHERE id=?"),
    lastSeq: db.prepare(
      "INSERT INTO meta (key, value) VALUES ('last_seq', ?) ON CONFLICT(key) DO UPDATE SET value=excluded.value",
    ),
    maxSeq: db.prepare("SELECT max(seq) FROM records").pluck(),
    lastSeqValue: db.prepare("SELECT value FROM meta WHERE key='last_seq'").pluck(),
    bucketTime: db.prepare(
      `INSERT INTO bucket_times (k, min_observed) VALUES (?, ?)
       ON CONFLICT(k) DO UPDATE SET min_observed = min(min_observed, excluded.min_observed)`,
    ),
  };
}
export type WriterStatements = ReturnType<typeof writerStatements>;

/** The writes of one planned transaction, and the reads that must see them. */
export interface TxnWrites {
  /** How bodies are encoded for these writes, when not the writer's own (see ENC_PACK_LATER). */
  readonly codec?: CodecOptions;
  /** Whether an object row with this id is stored already (asked only when the id filter says maybe). */
  objectCopy(objectId: number, packedId: Buffer | string, eventId: string): boolean;
  /** Whether an audit row with this id is stored already for its event (stream and time). */
  auditCopy(
    streamRow: number,
    observedMs: number,
    packedId: Buffer | string,
    eventId: string,
  ): boolean;
  /** Stores one record row; false when a control row with its id is stored already (a copy). */
  row(
    objectRow: boolean,
    eventId: string,
    seq: number,
    packedId: Buffer | string,
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
  ): boolean;
  advance(rv: string, observedAt: string, streamRow: number): void;
  baselineDone(seq: number, streamRow: number): void;
  setState(state: string, streamRow: number): void;
  lastSeq(value: string): void;
  bucketTime(k: number, minObserved: number): void;
  /** Whether an earlier record of the stream carries rv: a control row, the checkpoint, or a recent row. */
  rvIsDurable(streamRow: number, rv: string, nextSeq: number): boolean;
}

// How far back a checkpoint may name an object RV that is neither in its batch nor a control row.
export const RECENT_ROWS = 100_000;

/** The writes run on the writer's own connection, inside the transaction open there. */
export class InlineWrites implements TxnWrites {
  constructor(
    private readonly st: WriterStatements,
    private readonly store: Store,
  ) {}

  objectCopy(objectId: number, packedId: Buffer | string): boolean {
    return (
      this.store.buckets.newest(Number.MAX_SAFE_INTEGER, b =>
        this.st.objectCopy.get(b, objectId, packedId),
      ) !== undefined
    );
  }

  auditCopy(streamRow: number, observedMs: number, packedId: Buffer | string): boolean {
    return this.st.auditCopy.get(streamRow, observedMs, packedId) !== undefined;
  }

  row(objectRow: boolean, _eventId: string, ...cols: RecordRow): boolean {
    return (objectRow ? this.st.insertObject : this.st.insertControl).run(...cols).changes > 0;
  }

  advance(rv: string, observedAt: string, streamRow: number): void {
    this.st.advance.run(rv, observedAt, streamRow);
  }

  baselineDone(seq: number, streamRow: number): void {
    this.st.baselineDone.run(seq, streamRow);
  }

  setState(state: string, streamRow: number): void {
    this.st.setState.run(state, streamRow);
  }

  lastSeq(value: string): void {
    this.st.lastSeq.run(value);
  }

  bucketTime(k: number, minObserved: number): void {
    this.st.bucketTime.run(k, minObserved);
  }

  rvIsDurable(streamRow: number, rv: string, nextSeq: number): boolean {
    return rvOnDisk(this.st, streamRow, rv, nextSeq);
  }
}

/** Whether a committed record of the stream carries rv: a control row, the checkpoint, or a recent row. */
export function rvOnDisk(
  st: WriterStatements,
  streamRow: number,
  rv: string,
  nextSeq: number,
): boolean {
  if (st.controlRv.get(streamRow, rv)) return true;
  const cur = st.lastRv.get(streamRow) as { last_rv: string | null } | undefined;
  if (cur?.last_rv === rv) return true;
  return st.recentRv.get(nextSeq - RECENT_ROWS, streamRow, rv) !== undefined;
}
