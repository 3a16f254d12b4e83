/**
 * The journal's writer thread: runs the append transactions the main thread packed (txn-pack.ts)
 * on a connection of its own, so SQLite's inserts and commit overlap the planning of the next batch.
 * writer-thread.ts starts it and is its only client.
 */
import type Database from "better-sqlite3";
import { parentPort, workerData, type MessagePort } from "node:worker_threads";
import { ENC_PACK_LATER, finishPack } from "../codec/codec";
import { connect } from "../store/connection";
import type { SyncMode } from "../types";
import { writerStatements, type WriterStatements } from "./txn-writes";
import { applyTxn, readExpect } from "./txn-apply";
import type { RecordRow, TxnOps } from "./txn-format";

export interface WriterWorkerData {
  path: string;
  sync?: SyncMode;
  pageCacheKiB?: number;
  busyTimeoutMs?: number;
  /** better-sqlite3's addon the parent loads (KRPLY_SQLITE_BINDING); undefined: the package's own. */
  nativeBinding?: string;
  /** Settings of the connection beyond the journal's defaults (see WriterPragma). */
  pragmas?: Partial<Record<WriterPragma, number>>;
  /** Int32 slots shared with the client: [0] messages finished, [1] the thread's state. */
  signal: SharedArrayBuffer;
}

/** Values of the state slot: the client blocks on it while the thread starts. */
export const STARTING = 0;
export const READY = 1;
export const FAILED = 2;
export const EXITED = 3;

/**
 * The connection settings the journal changes on its writer after opening it: the byte budget's
 * cap on the file (max_page_count; SQLite fails a write past it with SQLITE_FULL, as on a full
 * disk), its WAL limits, and the page cache the memory governor resizes. They hold per connection,
 * so the thread's connection, which does the writing, needs them too.
 */
export const WRITER_PRAGMAS = [
  "max_page_count",
  "cache_size",
  "wal_autocheckpoint",
  "journal_size_limit",
] as const;
export type WriterPragma = (typeof WRITER_PRAGMAS)[number];

export type WriterRequest =
  | { type: "txn"; gen: number; id: number; data: ArrayBuffer }
  | { type: "pragma"; id: number; name: WriterPragma; value: number }
  | { type: "close" };

/** A transaction's outcome: committed (neither field), aborted unrun, or failed. */
export interface WriterReply {
  id: number;
  aborted?: true;
  error?: { code: string; message: string };
}

/** A failure with the code the client passes on (SQLite's own, or one of ours). */
class Refused extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

function setPragma(db: Database.Database, name: string, value: number): void {
  // Checked, not trusted: the name and value become SQL text.
  if (!(WRITER_PRAGMAS as readonly string[]).includes(name) || !Number.isSafeInteger(value))
    throw new Refused(`the writer thread does not set ${name} = ${value}`, "INVALID");
  db.pragma(`${name} = ${value}`);
}

/** A row as stored: a body the planner left raw (ENC_PACK_LATER) is deflated here when that is smaller. */
function packed(row: RecordRow): RecordRow {
  const body = row[11];
  if (body === null || !(row[8] & ENC_PACK_LATER)) return row;
  const p = finishPack(row[8], body);
  row[8] = p.flags;
  row[11] = p.body;
  return row;
}

/** The prepared statements behind each op: the append path's own SQL, plus inserts with explicit ids. */
function opsOver(db: Database.Database, st: WriterStatements): TxnOps {
  const insertObject = db.prepare(
    "INSERT INTO objects (id, cluster_id, kind, namespace, name, grp) VALUES (?,?,?,?,?,?)",
  );
  const insertStream = db.prepare(
    "INSERT INTO streams (id, stream_id, cluster_id, grp, version, resource, namespace, selector) VALUES (?,?,?,?,?,?,?,?)",
  );
  const leaseGet = db.prepare("SELECT value FROM meta WHERE key=?").pluck();
  const leasePut = db.prepare("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)");
  return {
    record: (...row: RecordRow) => void st.insertObject.run(...packed(row)),
    control: (...row: RecordRow) => {
      // The planner asked the file (and its transactions in flight) before packing a control row;
      // a collision now means the file holds rows the planner never saw.
      if (st.insertControl.run(...packed(row)).changes === 0)
        throw new Refused(`record ${row[0]}: its event id is already stored`, "CONFLICT");
    },
    advance: (rv, observedAt, streamRow) => void st.advance.run(rv, observedAt, streamRow),
    baselineDone: (seq, streamRow) => void st.baselineDone.run(seq, streamRow),
    setState: (state, streamRow) => void st.setState.run(state, streamRow),
    lastSeq: value => void st.lastSeq.run(value),
    bucketTime: (k, minObserved) => void st.bucketTime.run(k, minObserved),
    insertObject: (...row) => void insertObject.run(...row),
    insertStream: (...row) => void insertStream.run(...row),
    leaseRenew: (leaseKey, instance, valueJson) => {
      let holder: unknown;
      try {
        holder = (JSON.parse(leaseGet.get(leaseKey) as string) as { instance?: unknown }).instance;
      } catch {
        // No lease row, or one nobody can read: either way it is no longer ours.
      }
      if (holder !== instance)
        throw new Refused("another recorder took this journal's lease", "LEASED");
      leasePut.run(leaseKey, valueJson);
    },
  };
}

/** Opens the connection and serves transactions on `port`; throws when the file cannot be opened. */
export function serveWriter(data: WriterWorkerData, port: MessagePort): void {
  const db = connect(data.path, {
    readonly: false,
    create: false,
    sync: data.sync,
    pageCacheKiB: data.pageCacheKiB,
    busyTimeoutMs: data.busyTimeoutMs,
    nativeBinding: data.nativeBinding,
  });
  try {
    for (const [name, value] of Object.entries(data.pragmas ?? {})) setPragma(db, name, value);
  } catch (err) {
    db.close();
    throw err;
  }
  const st = writerStatements(db);
  const ops = opsOver(db, st);
  const maxObject = db.prepare("SELECT max(id) FROM objects").pluck();
  const maxStream = db.prepare("SELECT max(id) FROM streams").pluck();
  const begin = db.prepare("BEGIN IMMEDIATE");
  const commit = db.prepare("COMMIT");
  const rollback = db.prepare("ROLLBACK");
  const signal = new Int32Array(data.signal);
  // Transactions planned before a failure build on what it did not write: they are answered
  // without touching the file until the planner moves to a newer generation.
  let failedGen = -Infinity;

  /** Fails with OTHER_WRITER unless the file holds what the planner saw (inside the write lock). */
  const checkExpect = (txn: ArrayBuffer): void => {
    const want = readExpect(txn);
    // The highest seq ever used, as the journal's maxSeq() reads it: last_seq outlives deleted rows.
    const seq = Math.max(
      (st.maxSeq.get() as number | null) ?? 0,
      Number((st.lastSeqValue.get() as string | undefined) ?? 0),
    );
    const obj = (maxObject.get() as number | null) ?? 0;
    const str = (maxStream.get() as number | null) ?? 0;
    if (seq !== want.lastSeq || obj !== want.maxObjectId || str !== want.maxStreamId) {
      throw new Refused(
        `the journal was written by another writer (seq ${seq}, objects ${obj}, streams ${str}; ` +
          `planned on ${want.lastSeq}, ${want.maxObjectId}, ${want.maxStreamId})`,
        "OTHER_WRITER",
      );
    }
  };

  const failure = (id: number, err: unknown): WriterReply => {
    const e = err as { code?: unknown; message?: unknown };
    return {
      id,
      error: {
        code: typeof e.code === "string" ? e.code : "IO",
        message: typeof e.message === "string" ? e.message : String(err),
      },
    };
  };

  const run = (m: Exclude<WriterRequest, { type: "close" }>): WriterReply => {
    if (m.type === "pragma") {
      try {
        setPragma(db, m.name, m.value);
        return { id: m.id };
      } catch (err) {
        return failure(m.id, err);
      }
    }
    if (m.gen <= failedGen) return { id: m.id, aborted: true };
    try {
      begin.run();
      checkExpect(m.data);
      applyTxn(m.data, ops);
      commit.run();
      return { id: m.id };
    } catch (err) {
      try {
        if (db.inTransaction) rollback.run();
      } catch {
        // SQLite rolled back on its own (some I/O errors do); nothing is left to undo.
      }
      failedGen = Math.max(failedGen, m.gen);
      return failure(m.id, err);
    }
  };

  port.on("message", (m: WriterRequest) => {
    if (m.type === "close") {
      try {
        db.close();
      } finally {
        process.exit(0);
      }
    }
    port.postMessage(run(m));
    // After the reply is queued: a client blocked in drainSync wakes to find it there.
    Atomics.add(signal, 0, 1);
    Atomics.notify(signal, 0);
  });
  Atomics.store(signal, 1, READY);
  Atomics.notify(signal, 1);
}

// Started as the writer thread (by writer-thread.ts's bootstrap): serve the parent.
const wd = workerData as { writer?: WriterWorkerData } | null;
if (parentPort && wd?.writer) serveWriter(wd.writer, parentPort);
