import { randomBytes } from "node:crypto";
import { existsSync, statSync } from "node:fs";
import Database from "better-sqlite3";
import type { JournalRecord } from "../event/schema";
import { logger } from "../log/logger";
import { LruCache, type CachedVersion, type KeyframePosition } from "./store/cache";
import type { CodecOptions } from "./codec/codec";
import { loadIdFilter } from "./write/dedup";
import { toJournalError } from "./errors";
import { runFsck } from "./maintain/fsck";
import { gapsWithResolution, objectAt } from "./read/object-at";
import { packId, typeCode } from "./store/rows";
import { controlRecords, listStreams, objectHistory, queryEvents } from "./read/readers";
import type { RedactPolicy } from "./write/redact";
import { Retention } from "./maintain/retention";
import { migrate } from "./store/schema";
import { Store } from "./store/store";
import {
  JournalError,
  type AppendBatch,
  type AppendResult,
  type EventPage,
  type EventQuery,
  type FsckReport,
  type Journal,
  type JournalOptions,
  type ObjectAtResult,
  type ObjectSelector,
  type PointInTime,
  type StreamInfo,
  type StreamState,
} from "./types";
import {
  appendInTxn,
  writerStatements,
  type WriterState,
  type WriterStatements,
} from "./write/append";

const log = logger("journal");

export const DEFAULTS = {
  busyTimeoutMs: 5000,
  keyframeEvery: 128,
  lastVersionCacheSize: 10_000,
  deflateMinBytes: 384,
  sync: "FULL" as const,
  pageCacheKiB: 65536,
  readerMmapBytes: 1 << 30,
  /** Page size of a new file (an existing file keeps its own). */
  pageSize: 16384,
};

// Bounds of the evicted-keyframe position cache: entries are a few dozen bytes each.
const POSITIONS_MIN = 65_536;
const POSITIONS_PER_CACHED = 16;

function metaValue(db: Database.Database, key: string): string | null {
  const r = db.prepare("SELECT value FROM meta WHERE key=?").get(key) as
    | { value: string }
    | undefined;
  return r?.value ?? null;
}

class SqliteJournal implements Journal {
  readonly readonly: boolean;
  private readonly db: Database.Database;
  private readonly store: Store;
  private readonly w: WriterState | null = null;
  private readonly st: WriterStatements | null = null;
  private readonly retention: Retention | null = null;
  private closed = false;

  constructor(
    readonly path: string,
    private readonly options: JournalOptions,
  ) {
    this.readonly = options.readonly ?? false;
    if (this.readonly && !existsSync(path))
      throw new JournalError(`journal ${path} does not exist`, "INVALID");
    const dbOpts: Database.Options = { readonly: this.readonly, fileMustExist: this.readonly };
    if (options.nativeBinding) dbOpts.nativeBinding = options.nativeBinding;
    try {
      this.db = new Database(path, dbOpts);
    } catch (err) {
      throw toJournalError(err, `open ${path}`);
    }
    try {
      this.db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? DEFAULTS.busyTimeoutMs}`);
      // Readers (the sidecar, the CLI) fetch one row per version from all over the file; mapping it
      // saves a read() and a copy per page. The recorder's writer does not map it, so its resident
      // memory stays that of its caches rather than growing with the file.
      if (this.readonly) this.db.pragma(`mmap_size = ${DEFAULTS.readerMmapBytes}`);
      if (!this.readonly) {
        // A commit pays per WAL frame: 16 KiB pages cut the frames of a 500-record batch by more
        // than half, which in bench/journal.ts (then with the v4 object index, whose random inserts
        // dirtied a page per record) took 3-6 µs off each append. SQLite applies it to new files only.
        this.db.pragma(`page_size = ${DEFAULTS.pageSize}`);
        this.db.pragma("journal_mode = WAL");
        // FULL: a committed append survives power loss. NORMAL: survives a process crash, may lose
        // the last commits on power loss, never corrupts. See docs/consistency.md.
        this.db.pragma(`synchronous = ${options.sync ?? DEFAULTS.sync}`);
        // Dedup keys are random, so index inserts touch random pages; keep more of them in memory.
        this.db.pragma(`cache_size = -${DEFAULTS.pageCacheKiB}`);
      }
      migrate(this.db, this.readonly);
      this.store = new Store(this.db);
      if (!this.readonly) {
        let salt = metaValue(this.db, "redact_salt");
        if (!salt) {
          salt = randomBytes(16).toString("hex");
          this.db.prepare("INSERT INTO meta (key, value) VALUES ('redact_salt', ?)").run(salt);
        }
        const codec: CodecOptions = {
          keyframeEvery: Math.max(1, options.keyframeEvery ?? DEFAULTS.keyframeEvery),
          deflateMinBytes: DEFAULTS.deflateMinBytes,
        };
        const policy: RedactPolicy = {
          kinds: new Set(["Secret", ...(options.redact?.kinds ?? [])]),
          configMapKeyPatterns: options.redact?.configMapKeyPatterns ?? [],
          salt,
        };
        const cacheSize = options.lastVersionCacheSize ?? DEFAULTS.lastVersionCacheSize;
        // An evicted keyframe leaves its position behind (three numbers, not the object), so the
        // miss that brings it back reads the keyframe row directly instead of searching for it.
        const positions = new LruCache<number, KeyframePosition>(
          Math.max(POSITIONS_MIN, cacheSize * POSITIONS_PER_CACHED),
        );
        this.w = {
          store: this.store,
          cache: new LruCache<number, CachedVersion>(cacheSize, (id, v) =>
            positions.set(id, { seq: v.seq, chainLen: v.chainLen, keyframeBytes: v.keyframeBytes }),
          ),
          positions,
          policy,
          codec,
          ids: loadIdFilter(this.db),
          nextSeq: this.maxSeq() + 1,
          duplicates: 0,
        };
        this.st = writerStatements(this.db);
        if (options.retention && (options.retention.maxBytes || options.retention.maxAgeMs)) {
          this.retention = new Retention(this.db, this.store, path, options.retention, codec);
        }
      }
    } catch (err) {
      this.db.close();
      throw toJournalError(err, `open ${path}`);
    }
  }

  private maxSeq(): number {
    const r = this.db.prepare("SELECT max(seq) AS s FROM records").get() as { s: number | null };
    const last = Number(metaValue(this.db, "last_seq") ?? 0);
    return Math.max(r.s ?? 0, last);
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
    w.nextSeq = durable + 1;
    w.cache.clear();
    w.positions.clear();
    this.store.forget();
    this.store.registry.reloadStreams();
    w.ids = loadIdFilter(this.db);
  }

  private live(): void {
    if (this.closed) throw new JournalError(`journal ${this.path} is closed`, "CLOSED");
  }

  private writable(): { w: WriterState; st: WriterStatements } {
    this.live();
    if (!this.w || !this.st)
      throw new JournalError(`journal ${this.path} is open read-only`, "READONLY");
    return { w: this.w, st: this.st };
  }

  append(batch: AppendBatch): AppendResult {
    const { w, st } = this.writable();
    if (batch.records.length === 0 && batch.checkpoints.length === 0 && !batch.streams?.length) {
      return { appended: 0, duplicates: 0, firstSeq: null, lastSeq: null };
    }
    try {
      return this.commit(w, st, batch);
    } catch (err) {
      const e = toJournalError(err, "append");
      if (e.code !== "DISK_FULL" || !this.retention) throw e;
      // Over budget: make room from the oldest history, then try the batch once more.
      log.warn({ err: e.message }, "append hit the size cap; pruning and retrying");
      this.prune(new Date(), true);
      try {
        return this.commit(w, st, batch);
      } catch (err2) {
        throw toJournalError(err2, "append after prune");
      }
    }
  }

  private commit(w: WriterState, st: WriterStatements, batch: AppendBatch): AppendResult {
    let out: ReturnType<typeof appendInTxn>;
    try {
      out = this.db
        .transaction(() => {
          this.catchUpWithOtherWriters(w);
          return appendInTxn(w, st, batch);
        })
        .immediate();
    } catch (err) {
      // The transaction rolled back; in-memory registries may name rows that no longer exist.
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
    for (const [id, v] of out.pending) w.cache.set(id, v);
    // Past its design size the filter's false positives climb, so it is rebuilt twice as large.
    if (w.ids.full) w.ids = loadIdFilter(this.db);
    if (this.retention?.due()) this.prune(new Date());
    return out.result;
  }

  streams(): StreamInfo[] {
    this.live();
    return listStreams(this.store);
  }

  setStreamState(streamId: string, state: StreamState): void {
    this.writable();
    const info = this.db
      .prepare("UPDATE streams SET state=? WHERE stream_id=?")
      .run(state, streamId);
    if (info.changes === 0) throw new JournalError(`unknown stream ${streamId}`, "INVALID");
  }

  events(query: EventQuery): EventPage {
    this.live();
    return queryEvents(this.store, query);
  }

  objectHistory(sel: ObjectSelector): JournalRecord[] {
    this.live();
    return objectHistory(this.store, sel);
  }

  objectAt(sel: ObjectSelector, at: PointInTime): ObjectAtResult {
    this.live();
    return objectAt(this.store, sel, at, metaValue(this.db, "pruned_before"));
  }

  baselines(streamId?: string): JournalRecord[] {
    this.live();
    return controlRecords(this.store, "baseline", streamId);
  }

  gaps(streamId?: string): JournalRecord[] {
    this.live();
    return gapsWithResolution(this.store, streamId).map(g => g.record);
  }

  snapshots(): JournalRecord[] {
    this.live();
    return controlRecords(this.store, "snapshot");
  }

  deleteSnapshots(eventIds: string[]): number {
    this.writable();
    // Snapshot records are summaries that nothing else points at, so removing one leaves every
    // chain, checkpoint and ingestSeq intact.
    const del = this.db.prepare(
      "DELETE FROM records WHERE object IS NULL AND type=? AND event_id=?",
    );
    try {
      const n = this.db
        .transaction(() =>
          eventIds.reduce((sum, id) => sum + del.run(typeCode("snapshot"), packId(id)).changes, 0),
        )
        .immediate();
      if (n > 0) log.info({ path: this.path, deleted: n }, "deleted expired snapshot records");
      return n;
    } catch (err) {
      throw toJournalError(err, "delete snapshots");
    }
  }

  prune(now?: Date, force = false): JournalRecord | null {
    const { w } = this.writable();
    if (!this.retention) return null;
    try {
      const rec = this.retention.run(now ?? new Date(), force, w.nextSeq);
      if (rec) {
        w.nextSeq = rec.ingestSeq! + 1;
        // Pruning rewrites chains into keyframes, so cached chain lengths are stale.
        w.cache.clear();
        w.positions.clear();
      }
      return rec;
    } catch (err) {
      this.store.registry.reloadStreams();
      this.store.forget();
      throw toJournalError(err, "prune");
    }
  }

  fsck(): FsckReport {
    this.live();
    return runFsck(this.store);
  }

  sizeBytes(): number {
    this.live();
    let total = 0;
    for (const p of [this.path, `${this.path}-wal`]) {
      if (existsSync(p)) total += statSync(p).size;
    }
    return total;
  }

  stats(): { duplicates: number; cacheHits: number; cacheMisses: number; records: number } {
    this.live();
    const r = this.db.prepare("SELECT count(*) AS n FROM records").get() as { n: number };
    return {
      duplicates: this.w?.duplicates ?? 0,
      cacheHits: this.w?.cache.hits ?? 0,
      cacheMisses: this.w?.cache.misses ?? 0,
      records: r.n,
    };
  }

  /** Runs a WAL checkpoint (TRUNCATE), so the -wal file stops counting toward size. */
  checkpointWal(): void {
    this.writable();
    this.db.pragma("wal_checkpoint(TRUNCATE)");
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.db.close();
  }
}

/** Opens (creating and migrating if needed) the journal at path. */
export function openJournal(
  path: string,
  options: JournalOptions = {},
): Journal & { checkpointWal(): void } {
  return new SqliteJournal(path, options);
}
