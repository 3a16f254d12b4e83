import { chmodSync, copyFileSync, existsSync } from "node:fs";
import type Database from "better-sqlite3";
import type { JournalRecord } from "../event";
import { logger } from "../log/logger";
import type { CodecOptions } from "./codec/codec";
import { toJournalError } from "./errors";
import { TAIL_ROWS } from "./maintain/fsck";
import { salvageInto } from "./maintain/salvage";
import { RecorderLease, type RecorderLeaseOptions } from "./write/lease";
import { FULL_DISK_STEP, Retention } from "./maintain/retention";
import { SqliteView } from "./read/view";
import { LruCache, type CachedVersion } from "./store/cache";
import { KeyframeTable } from "./store/keyframe-table";
import { KeyframeBodies } from "./store/keyframe-bodies";
import { connect, CONNECTION_DEFAULTS } from "./store/connection";
import { packId, typeCode } from "./store/rows";
import { Store } from "./store/store";
import {
  JournalError,
  type AppendBatch,
  type AppendResult,
  type Journal,
  type JournalOptions,
  type JournalStats,
  type JournalView,
  type JournalViewOptions,
  type SalvageResult,
  type StreamState,
  type WriterThreadStatus,
} from "./types";
import { appendInTxn, type WriterState } from "./write/append";
import { AsyncAppends } from "./write/async-appends";
import { InlineWrites, writerStatements, type WriterStatements } from "./write/txn-writes";
import { loadDedupWindow } from "./write/dedup";
import { defaultKeyFile, loadDigestKey } from "./write/digest-key";
import type { RedactPolicy } from "./write/redact";
import { noteRemoval } from "./store/removals";

const log = logger("journal");

export const DEFAULTS = {
  ...CONNECTION_DEFAULTS,
  keyframeEvery: 128,
  lastVersionCacheSize: 10_000,
  keyframeBodyCacheBytes: 16 * 1024 * 1024,
  deflateMinBytes: 384,
};

/** Runs the open check the caller asked for; a journal that fails it is not used. */
function check(
  view: SqliteView,
  path: string,
  db: Database.Database,
  level: JournalOptions["check"],
  tailRows = TAIL_ROWS,
): void {
  if (!level || level === "none") return;
  let problems: string[];
  try {
    problems =
      level === "full"
        ? view.fsck().problems
        : level === "tail"
          ? view.tailCheck(tailRows).problems
          : [db.pragma("quick_check", { simple: true }) as string].filter(r => r !== "ok");
  } catch (err) {
    // A damaged page makes SQLite throw (SQLITE_CORRUPT) instead of reporting.
    const e = toJournalError(err, `check ${path}`);
    if (e.code !== "CORRUPT") throw e;
    problems = [e.message];
  }
  if (problems.length > 0)
    throw new JournalError(`journal ${path} failed its check: ${problems.join("; ")}`, "CORRUPT");
}

class SqliteJournal extends SqliteView implements Journal {
  private readonly w: WriterState;
  private readonly st: WriterStatements;
  private readonly inline: InlineWrites;
  private readonly retention: Retention | null = null;
  private lease: RecorderLease | null = null;
  /** Pipelined appends over the writer thread: started by the first appendAsync, null when off. */
  private async: AsyncAppends | null | undefined;
  /** JournalOptions.writerThread, or true once enableWriterThread ran. */
  private writerThread: boolean;
  /** Why the writer thread did not start or ended; null while it runs or was never asked for. */
  private writerThreadFailure: string | null = null;

  constructor(
    path: string,
    db: Database.Database,
    private readonly options: JournalOptions,
    /** Records arrive already redacted (a salvage copies them from another journal). */
    verbatim = false,
  ) {
    super(path, db, new Store(db));
    this.writerThread = options.writerThread ?? false;
    const salt = loadDigestKey(db, path, options.redact?.keyFile);
    const codec: CodecOptions = {
      keyframeEvery: Math.max(1, options.keyframeEvery ?? DEFAULTS.keyframeEvery),
      deflateMinBytes: DEFAULTS.deflateMinBytes,
    };
    const policy: RedactPolicy = {
      kinds: new Set(["Secret", ...(options.redact?.kinds ?? [])]),
      configMapKeyPatterns: options.redact?.configMapKeyPatterns ?? [],
      annotations: options.redact?.annotations,
      salt,
      verbatim,
    };
    this.st = writerStatements(db);
    this.inline = new InlineWrites(this.st, this.store);
    const cacheSize = options.lastVersionCacheSize ?? DEFAULTS.lastVersionCacheSize;
    this.w = {
      store: this.store,
      cache: new LruCache<number, CachedVersion>(cacheSize),
      // Every stored object's keyframe position (three numbers, not the object), so the miss that
      // brings an object back reads its keyframe row directly instead of searching for it.
      positions: new KeyframeTable(),
      bodies: new KeyframeBodies(
        Math.max(0, options.keyframeBodyCacheBytes ?? DEFAULTS.keyframeBodyCacheBytes),
      ),
      policy,
      codec,
      ids: loadDedupWindow(db, this.maxSeq() + 1, options.dedupWindow),
      nextSeq: this.maxSeq() + 1,
      duplicates: 0,
    };
    const r = options.retention;
    if (r && (r.maxBytes || r.volumePercent || r.maxAgeMs)) {
      this.retention = new Retention(db, this.store, path, r, codec);
    }
  }

  /** The highest seq ever used, asked before every batch (prepared once: a prepare costs more than the query). */
  private maxSeq(): number {
    const top = this.st.maxSeq.get() as number | null;
    const last = Number((this.st.lastSeqValue.get() as string | undefined) ?? 0);
    return Math.max(top ?? 0, last);
  }

  /**
   * Another connection may have appended since our last batch (a second writer such as a CLI
   * snapshot). Our seq counter, last-version cache and id filter would then describe a stale file,
   * and diffing against a stale base would corrupt delta chains, so rebuild them from disk. Runs
   * inside the IMMEDIATE transaction, which holds the write lock, so nobody can move underneath.
   */
  private catchUpWithOtherWriters(w: WriterState): void {
    const durable = this.maxSeq();
    if (durable === w.nextSeq - 1) return;
    log.warn(
      { path: this.path, expected: w.nextSeq - 1, durable },
      "journal was appended by another writer; reloading writer state",
    );
    this.reloadWriterState();
  }

  /** Forgets everything the writer knew beyond the file (caches, unsaved keyframes) and reads it again. */
  private reloadWriterState(): void {
    const w = this.w;
    w.nextSeq = this.maxSeq() + 1;
    w.cache.clear();
    w.positions.clear();
    w.unsaved = [];
    w.bodies.clear();
    this.store.forget();
    this.store.registry.reloadStreams();
    w.ids = loadDedupWindow(this.db, w.nextSeq, w.ids.capacity);
  }

  /** Marks the file changed by this connection, so the view's caches are rebuilt on the next read. */
  private wrote(): void {
    this.localWrites++;
  }

  /**
   * Like append, but the batch commits on the journal's writer thread while the caller goes on (and
   * may plan the next batch): with writerThread set, up to a few batches are in flight at once, and
   * they commit in the order of the calls. Without a writer thread it is append behind a promise.
   */
  appendAsync(batch: AppendBatch): Promise<AppendResult> {
    try {
      this.open();
      if (this.async?.ended) {
        // Its batches in flight failed (and were reported); what comes next is appended here.
        this.writerThreadFailure = `it ended: ${this.async.ended}`;
        log.warn(
          { path: this.path, reason: this.async.ended },
          "the journal's writer thread ended; appends run on the main thread",
        );
        this.async = null;
      }
      if (this.async === undefined) this.async = this.startAsync();
      if (!this.async) return Promise.resolve(this.append(batch));
      return this.async.append(batch);
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : toJournalError(err, "append"));
    }
  }

  /**
   * Starts pipelining appendAsync over a writer thread from the next call on (a recorder that finds
   * a big cluster; JournalOptions.writerThread does it from the start).
   */
  enableWriterThread(): void {
    if (this.writerThread) return;
    if (this.async === null) this.async = undefined;
    this.writerThread = true;
  }

  writerThreadStatus(): WriterThreadStatus {
    if (this.async?.ended) return { state: "failed", reason: `it ended: ${this.async.ended}` };
    if (this.async) return { state: "running" };
    if (this.writerThreadFailure !== null)
      return { state: "failed", reason: this.writerThreadFailure };
    return { state: this.writerThread ? "pending" : "off" };
  }

  /** Starts the writer thread; null (and a warning) when it cannot start, so appends stay inline. */
  private startAsync(): AsyncAppends | null {
    if (!this.writerThread) return null;
    try {
      const started = this.startWriterThread();
      this.writerThreadFailure = null;
      return started;
    } catch (err) {
      this.writerThreadFailure = err instanceof Error ? err.message : String(err);
      log.warn(
        { err: this.writerThreadFailure, path: this.path },
        "the journal's writer thread did not start; appends run on the main thread",
      );
      return null;
    }
  }

  private startWriterThread(): AsyncAppends {
    return AsyncAppends.start(
      {
        db: this.db,
        path: this.path,
        w: this.w,
        st: this.st,
        store: this.store,
        reloadWriterState: () => this.reloadWriterState(),
        afterCommit: () => this.afterCommit(),
        makeRoom: () => this.makeRoom(),
        writerPragmas: () => this.retention?.connectionPragmas ?? {},
        leaseCheck: renew => this.lease?.renewVia(renew),
      },
      {
        sync: this.options.sync,
        pageCacheKiB: this.pageCacheKiB(),
        busyTimeoutMs: this.options.busyTimeoutMs ?? CONNECTION_DEFAULTS.busyTimeoutMs,
        script: this.options.writerScript,
      },
    );
  }

  /** On a full disk: prunes the oldest history in steps; false when the journal has no retention. */
  private makeRoom(): boolean {
    if (!this.retention) return false;
    this.retention.diskFull();
    this.pruneInSteps();
    return true;
  }

  /** Lets every batch in flight on the writer thread finish before a write on this connection. */
  private quiesce(): void {
    this.async?.quiesce();
  }

  /** After a batch is durable: the view's caches go stale, and retention runs when due. */
  private afterCommit(): void {
    this.wrote();
    // A prune that fails is retried after a later batch, never fails this one.
    if (this.retention?.due()) {
      try {
        this.prune(new Date());
      } catch (err) {
        log.warn({ err, path: this.path }, "prune after an append failed; it is retried later");
      }
    }
  }

  append(batch: AppendBatch): AppendResult {
    this.open();
    this.quiesce();
    if (batch.records.length === 0 && batch.checkpoints.length === 0 && !batch.streams?.length) {
      return { appended: 0, duplicates: 0, firstSeq: null, lastSeq: null };
    }
    try {
      return this.commit(batch);
    } catch (err) {
      const e = toJournalError(err, "append");
      if (e.code !== "DISK_FULL" || !this.retention) throw e;
      // Over budget or out of disk: make room from the oldest history, then try the batch once more.
      log.warn({ err: e.message }, "append hit the size cap; pruning and retrying");
      this.retention.diskFull();
      this.pruneInSteps();
      try {
        return this.commit(batch);
      } catch (err2) {
        throw toJournalError(err2, "append after prune");
      }
    }
  }

  private commit(batch: AppendBatch): AppendResult {
    const w = this.w;
    let out: ReturnType<typeof appendInTxn>;
    try {
      out = this.db
        .transaction(() => {
          this.lease?.renewInTransaction();
          this.catchUpWithOtherWriters(w);
          return appendInTxn(w, this.inline, batch);
        })
        .immediate();
    } catch (err) {
      // The transaction rolled back; in-memory registries may name rows that no longer exist.
      // Keyframe positions and kept bodies stay: they change only once a batch commits, and bodies
      // read back during the batch are of keyframes committed before it.
      this.store.registry.reloadStreams();
      this.store.forget();
      // When the WAL could not grow, moving committed frames into the main file lets the next
      // append reuse the WAL from its start; if that fails too, the original error still stands.
      try {
        this.db.pragma("wal_checkpoint(PASSIVE)");
      } catch (cpErr) {
        log.warn(
          { err: cpErr, path: this.path },
          "WAL checkpoint after a failed append failed too",
        );
      }
      throw err;
    }
    w.nextSeq = out.nextSeq;
    w.duplicates += out.duplicates;
    for (const [id, v] of out.pending) {
      w.cache.set(id, v);
      w.positions.set(id, v);
    }
    for (const [id, k] of out.keyframes) w.bodies.set(id, k.seq, k.flags, k.body);
    for (const [stream, seq] of out.resumes) w.ids.checkpointAt(stream, seq);
    this.afterCommit();
    return out.result;
  }

  /** Takes the recorder's lease (see write/lease.ts); throws LEASED while another recorder holds it. */
  holdRecorderLease(options: RecorderLeaseOptions): void {
    this.quiesce();
    const lease = new RecorderLease(this.db, this.path, options);
    lease.acquire();
    this.lease = lease;
  }

  override close(): void {
    // Batches in flight finish first; the thread then closes its own connection.
    if (this.async) {
      this.quiesce();
      this.async
        .close()
        .catch((err: unknown) =>
          log.warn({ err, path: this.path }, "the journal's writer thread did not close cleanly"),
        );
      this.async = null;
    }
    this.lease?.release();
    this.lease = null;
    super.close();
  }

  setStreamState(streamId: string, state: StreamState): void {
    this.open();
    this.quiesce();
    const info = this.db
      .prepare("UPDATE streams SET state=? WHERE stream_id=?")
      .run(state, streamId);
    if (info.changes === 0) throw new JournalError(`unknown stream ${streamId}`, "INVALID");
    this.wrote();
  }

  deleteSnapshots(eventIds: string[]): number {
    this.open();
    this.quiesce();
    // Snapshot records are summaries that nothing else points at, so removing one leaves every
    // chain, checkpoint and ingestSeq intact.
    const del = this.db.prepare(
      "DELETE FROM records WHERE object IS NULL AND type=? AND event_id=?",
    );
    try {
      const n = this.db
        .transaction(() => {
          const gone = eventIds.reduce(
            (sum, id) => sum + del.run(typeCode("snapshot"), packId(id)).changes,
            0,
          );
          if (gone > 0) noteRemoval(this.db);
          return gone;
        })
        .immediate();
      this.wrote();
      if (n > 0) log.info({ path: this.path, deleted: n }, "deleted expired snapshot records");
      return n;
    } catch (err) {
      throw toJournalError(err, "delete snapshots");
    }
  }

  /** On a full volume: small prunes, each committed and checkpointed, until the journal is back at its target. */
  private pruneInSteps(): void {
    for (let step = 0; step < 1 / FULL_DISK_STEP && this.retention?.overTarget(); step++) {
      if (!this.prune(new Date(), true, FULL_DISK_STEP)) break;
    }
  }

  prune(now?: Date, force = false, maxShare?: number): JournalRecord | null {
    this.open();
    this.quiesce();
    if (!this.retention) return null;
    const w = this.w;
    try {
      const rec = this.retention.run(now ?? new Date(), force, w.nextSeq, maxShare);
      if (rec) {
        this.wrote();
        w.nextSeq = rec.ingestSeq! + 1;
        // Pruning rewrites chains into keyframes, so cached chain lengths are stale.
        w.cache.clear();
        w.positions.clear();
        w.unsaved = [];
        w.bodies.clear();
      }
      return rec;
    } catch (err) {
      this.store.registry.reloadStreams();
      this.store.forget();
      throw toJournalError(err, "prune");
    }
  }

  stats(): JournalStats {
    const ids = this.w.ids;
    return {
      duplicates: this.w.duplicates,
      cacheHits: this.w.cache.hits,
      cacheMisses: this.w.cache.misses,
      keyframeBodies: {
        entries: this.w.bodies.size,
        bytes: this.w.bodies.bytes,
        budgetBytes: this.w.bodies.budgetBytes,
        hits: this.w.bodies.hits,
        misses: this.w.bodies.misses,
      },
      records: this.recordCount(),
      budgetBytes: this.retention?.budgetBytes ?? null,
      pageCacheKiB: this.pageCacheKiB(),
      identities: this.store.registry.identityCache(),
      dedup: {
        bytes: ids.bytes,
        ids: ids.size,
        windowStart: ids.windowStart,
        exactChecks: ids.exactChecks,
      },
    };
  }

  checkpointWal(): void {
    this.open();
    this.quiesce();
    this.db.pragma("wal_checkpoint(TRUNCATE)");
  }

  setPageCacheKiB(kib: number): void {
    this.open();
    this.db.pragma(`cache_size = -${Math.max(1, Math.floor(kib))}`);
    // The writer thread's connection inserts into the same index pages, so it gets the same cache.
    this.async?.setPageCacheKiB(Math.max(1, Math.floor(kib)));
  }

  setIdentityCacheSize(entries: number): void {
    this.open();
    this.store.registry.setIdentityCacheSize(entries);
  }

  private pageCacheKiB(): number {
    this.open();
    // Negative: a bound in KiB; positive: in pages.
    const size = this.db.pragma("cache_size", { simple: true }) as number;
    if (size < 0) return -size;
    return (size * (this.db.pragma("page_size", { simple: true }) as number)) / 1024;
  }
}

/** Opens (creating and migrating if needed) the journal at path as its single writer. */
export function openJournal(path: string, options: JournalOptions = {}): Journal {
  const db = connect(path, {
    readonly: false,
    create: options.create,
    busyTimeoutMs: options.busyTimeoutMs,
    nativeBinding: options.nativeBinding,
    sync: options.sync,
    pageCacheKiB: options.pageCacheKiB,
  });
  let journal: SqliteJournal;
  try {
    journal = new SqliteJournal(path, db, options);
  } catch (err) {
    db.close();
    throw toJournalError(err, `open ${path}`);
  }
  try {
    // Before the check: a second recorder is refused at once, not after reading the file.
    const lease = options.recorderLease;
    if (lease) journal.holdRecorderLease(lease === true ? {} : lease);
    check(journal, path, db, options.check, options.tailRows);
  } catch (err) {
    journal.close();
    throw err;
  }
  return journal;
}

/**
 * Opens a long-lived read-only view of an existing journal. It checks the schema (a newer one
 * fails with SCHEMA_NEWER), waits on a busy writer up to busyTimeoutMs, and never writes.
 */
export function openJournalView(path: string, options: JournalViewOptions = {}): JournalView {
  const db = connect(path, {
    readonly: true,
    idleSnapshot: options.idleSnapshot,
    mmapBytes: options.mmapBytes,
    pageCacheKiB: options.pageCacheKiB,
    busyTimeoutMs: options.busyTimeoutMs,
    nativeBinding: options.nativeBinding,
  });
  try {
    return guardReads(new SqliteView(path, db, new Store(db)));
  } catch (err) {
    db.close();
    throw toJournalError(err, `open ${path}`);
  }
}

/**
 * A view whose every read failure is a JournalError. The view checks its own inputs with INVALID;
 * anything else that fails while reading is the file: SQLite's codes map as on the write path, and a
 * body that does not decode (inflate, a patch, JSON) is CORRUPT, so callers can say "run fsck".
 */
function guardReads(view: JournalView): JournalView {
  const readError = (err: unknown): JournalError => {
    if (err instanceof JournalError) return err;
    const code = (err as { code?: unknown })?.code;
    if (typeof code === "string" && code.startsWith("SQLITE_"))
      return toJournalError(err, `read ${view.path}`);
    const msg = err instanceof Error ? err.message : String(err);
    return new JournalError(
      `read ${view.path}: cannot decode a stored record (${msg})`,
      "CORRUPT",
      {
        cause: err,
      },
    );
  };
  return new Proxy(view, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target) as unknown;
      if (typeof v !== "function" || prop === "close") return v;
      return (...args: unknown[]) => {
        try {
          return (v as (...a: unknown[]) => unknown).apply(target, args);
        } catch (err) {
          throw readError(err);
        }
      };
    },
  });
}

/**
 * Copies every record of a damaged journal that can still be read and rebuilt into a new journal at
 * target, in ingest order, with a GAP record on every stream where rows were lost (salvage.ts). The
 * source is only read; target must not exist. The source's digest key file comes along, so digests
 * written after the salvage stay comparable with those before it.
 */
export function salvageJournal(source: string, target: string): SalvageResult {
  if (existsSync(target)) {
    throw new JournalError(
      `${target} exists; a salvage writes a new file and never on top of another`,
      "INVALID",
    );
  }
  const src = connect(source, { readonly: true });
  try {
    const store = new Store(src);
    const streams = new SqliteView(source, src, store).streams();
    const key = defaultKeyFile(source);
    if (existsSync(key) && !existsSync(defaultKeyFile(target))) {
      copyFileSync(key, defaultKeyFile(target));
      chmodSync(defaultKeyFile(target), 0o600);
    }
    const db = connect(target, { readonly: false });
    let out: SqliteJournal;
    try {
      out = new SqliteJournal(target, db, {}, true);
    } catch (err) {
      db.close();
      throw toJournalError(err, `open ${target}`);
    }
    try {
      return salvageInto(store, streams, out, source, target);
    } finally {
      out.close();
    }
  } finally {
    src.close();
  }
}
