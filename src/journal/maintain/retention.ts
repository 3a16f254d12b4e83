import {
  closeSync,
  existsSync,
  ftruncateSync,
  openSync,
  statSync,
  statfsSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { dirname } from "node:path";
import type Database from "better-sqlite3";
import { recordIdFor } from "../../event";
import type { JournalRecord } from "../../event";
import { logger } from "../../log/logger";
import {
  encodeKeyframe,
  encodeObject,
  ENC_BITS,
  ENC_KEYFRAME,
  ENC_MASK,
  type BaseVersion,
  type CodecOptions,
  type EncodedBody,
} from "../codec/codec";
import { packId } from "../store/rows";
import { TYPE_CODES, WATCH_CODES } from "../store/schema";
import type { Store } from "../store/store";
import type { RetentionOptions } from "../types";
import { noteRemoval } from "../store/removals";

const log = logger("journal.retention");
const T = (t: JournalRecord["type"]): number => TYPE_CODES.indexOf(t);
const DELETED = WATCH_CODES.indexOf("DELETED");
// The main file is capped below the budget and the WAL is kept to the rest, so together they fit it.
const MAIN_SHARE = 0.95;
const WAL_SHARE = 0.05;
/** The most the WAL grows between automatic checkpoints, whatever the budget (SQLite's default is 1000 pages). */
const WAL_MAX_BYTES = 64 * 1024 * 1024;
const PRUNE_AT = 0.85; // of the main-file cap
const PRUNE_TO = 0.6;
const AGE_CHECK_MS = 60_000;
// A full disk leaves no room even to prune (a delete writes WAL frames, and a checkpoint may grow the
// main file), so a reserve file of the WAL's share is kept beside the journal and given up first.
const RESERVE_MIN = 64 * 1024;
const RESERVE_MAX = 64 * 1024 * 1024;
// A prune's WAL holds about as many bytes as it removes, so on a full volume it goes in steps this
// share of the records each, every step committed and checkpointed before the next.
export const FULL_DISK_STEP = 0.05;

/** The byte budget in bytes: the smaller of a fixed size and a share of the volume the journal is on. */
export function byteBudget(opts: RetentionOptions, path: string): number | undefined {
  let budget = opts.maxBytes;
  if (opts.volumePercent !== undefined) {
    const fs = statfsSync(dirname(path));
    const share = Math.floor((fs.blocks * fs.bsize * opts.volumePercent) / 100);
    budget = budget === undefined ? share : Math.min(budget, share);
  }
  return budget;
}

/**
 * How large the WAL may grow under a byte budget. Its share keeps a small budget honest; the ceiling
 * keeps a large one (80% of a big disk) from letting the WAL reach gigabytes between checkpoints,
 * which every reader pays for.
 */
export function walLimits(
  budgetBytes: number,
  pageSize: number,
): { autocheckpointPages: number; sizeLimitBytes: number } {
  const walBytes = Math.min(WAL_MAX_BYTES, budgetBytes * WAL_SHARE);
  return {
    autocheckpointPages: Math.max(8, Math.floor(walBytes / pageSize / 2)),
    sizeLimitBytes: Math.floor(walBytes),
  };
}

/** Byte-budget and age retention: prunes oldest history, keeping a keyframe per live object. */
export class Retention {
  private readonly pageSize: number;
  private capPages: number | null;
  private readonly reservePath: string;
  /** Most of the records one prune removes: all it needs, until the volume has once been full. */
  private stepShare = 1;
  /** The byte budget this journal runs with (null: none). */
  readonly budgetBytes: number | null;
  private lastAgeCheck = 0;
  /** Pages in use; prepared once, as due() runs after every commit (db.pragma() prepares per call). */
  private readonly pageCounts: Database.Statement;

  private walPragmas: Record<string, number> = {};

  constructor(
    private readonly db: Database.Database,
    private readonly store: Store,
    private readonly path: string,
    private readonly opts: RetentionOptions,
    private readonly codec: CodecOptions,
  ) {
    this.pageSize = db.pragma("page_size", { simple: true }) as number;
    this.pageCounts = db
      .prepare(
        "SELECT (SELECT page_count FROM pragma_page_count()) - (SELECT freelist_count FROM pragma_freelist_count())",
      )
      .pluck();
    this.capPages = null;
    const maxBytes = byteBudget(opts, path);
    this.budgetBytes = maxBytes ?? null;
    if (maxBytes) {
      const cap = Math.max(16, Math.floor((maxBytes * MAIN_SHARE) / this.pageSize));
      this.capPages = cap;
      db.pragma(`max_page_count = ${cap}`);
      const wal = walLimits(maxBytes, this.pageSize);
      db.pragma(`wal_autocheckpoint = ${wal.autocheckpointPages}`);
      db.pragma(`journal_size_limit = ${wal.sizeLimitBytes}`);
      this.walPragmas = {
        wal_autocheckpoint: wal.autocheckpointPages,
        journal_size_limit: wal.sizeLimitBytes,
      };
    }
    this.reservePath = `${path}-reserve`;
    if (maxBytes)
      this.makeReserve(Math.min(RESERVE_MAX, Math.max(RESERVE_MIN, maxBytes * WAL_SHARE)));
  }

  /**
   * The per-connection limits this budget sets on the writer's connection, which another connection
   * writing for it (the journal's writer thread) must set on its own as well.
   */
  get connectionPragmas(): Record<string, number> {
    return this.capPages === null ? {} : { max_page_count: this.capPages, ...this.walPragmas };
  }

  private makeReserve(bytes: number): void {
    if (existsSync(this.reservePath)) return;
    let fd: number | null = null;
    try {
      fd = openSync(this.reservePath, "w");
      // Written, not only sized: a sparse file would hold no blocks to give back.
      const chunk = Buffer.alloc(64 * 1024);
      for (let done = 0; done < bytes; done += chunk.length) writeSync(fd, chunk);
    } catch (err) {
      if (fd !== null) ftruncateSync(fd, 0);
      log.warn(
        { err, path: this.reservePath },
        "no room for the disk-full reserve; continuing without",
      );
    } finally {
      if (fd !== null) closeSync(fd);
    }
  }

  /**
   * The volume filled before the budget did (other files on it, or a budget larger than the free
   * space). Gives up the reserve, lets the WAL drain into the main file, and from now on caps the
   * journal at the pages it has, so the force prune that follows makes room inside the file.
   */
  diskFull(): void {
    let released = 0;
    if (existsSync(this.reservePath)) {
      released = statSync(this.reservePath).size;
      unlinkSync(this.reservePath);
      log.warn({ path: this.reservePath }, "volume full: released the reserve to prune");
    }
    try {
      this.db.pragma("wal_checkpoint(TRUNCATE)");
    } catch (err) {
      log.warn({ err, path: this.path }, "WAL checkpoint on a full volume failed");
    }
    this.stepShare = FULL_DISK_STEP;
    const pages = this.db.pragma("page_count", { simple: true }) as number;
    // Half the released reserve may grow the file while the prune reshuffles pages; the WAL takes the rest.
    const cap = pages + Math.floor(released / 2 / this.pageSize);
    if (this.capPages === null || cap < this.capPages) {
      this.capPages = Math.max(16, cap);
      this.db.pragma(`max_page_count = ${this.capPages}`);
      log.warn(
        { path: this.path, capBytes: this.capPages * this.pageSize },
        "volume full below the byte budget: the journal keeps to the size it has",
      );
    }
  }

  private usedPages(): number {
    return this.pageCounts.get() as number;
  }

  /** Cheap check after each commit: over the high-water mark, or (once a minute) past max age. */
  due(now = Date.now()): boolean {
    if (this.capPages && this.usedPages() > this.capPages * PRUNE_AT) return true;
    if (this.opts.maxAgeMs && now - this.lastAgeCheck > AGE_CHECK_MS) {
      this.lastAgeCheck = now;
      const r = this.db.prepare("SELECT observed_at FROM records ORDER BY seq LIMIT 1").get() as
        | { observed_at: number }
        | undefined;
      return r !== undefined && r.observed_at < now - this.opts.maxAgeMs;
    }
    return false;
  }

  private cutForAge(now: Date): number {
    if (!this.opts.maxAgeMs) return 0;
    const horizon = now.getTime() - this.opts.maxAgeMs;
    const r = this.db
      .prepare("SELECT min(seq) AS s FROM records WHERE observed_at >= ?")
      .get(horizon) as {
      s: number | null;
    };
    const max = this.db.prepare("SELECT max(seq) AS s FROM records").get() as { s: number | null };
    return r.s ?? (max.s ?? 0) + 1;
  }

  private cutForBytes(force: boolean, maxShare: number): number {
    if (!this.capPages) return 0;
    const used = this.usedPages();
    if (!force && used <= this.capPages * PRUNE_AT) return 0;
    const target = this.capPages * PRUNE_TO;
    const count = (this.db.prepare("SELECT count(*) AS n FROM records").get() as { n: number }).n;
    if (count === 0) return 0;
    const share = Math.min(maxShare, (used - target) / used);
    const drop = Math.min(count - 1, Math.ceil(share * count));
    const r = this.db
      .prepare("SELECT seq FROM records ORDER BY seq LIMIT 1 OFFSET ?")
      .get(Math.max(0, drop)) as { seq: number } | undefined;
    return r?.seq ?? 0;
  }

  /** Whether the journal holds more than the prune target (so one more step would free something). */
  overTarget(): boolean {
    return this.capPages !== null && this.usedPages() > this.capPages * PRUNE_TO;
  }

  /** Prunes if rules demand it (or force); returns the `pruned` record written, or null. */
  run(now: Date, force: boolean, nextSeq: number, maxShare = this.stepShare): JournalRecord | null {
    const cut = Math.max(this.cutForAge(now), this.cutForBytes(force, maxShare));
    const min = (this.db.prepare("SELECT min(seq) AS s FROM records").get() as { s: number | null })
      .s;
    if (min === null || cut <= min) return null;
    const reason: "bytes" | "age" = this.cutForAge(now) >= cut ? "age" : "bytes";
    const rec = this.db.transaction(() => this.pruneBelow(cut, now, nextSeq, reason)).immediate();
    if (rec) {
      const res = this.db.pragma("wal_checkpoint(TRUNCATE)") as { busy: number }[];
      if (res[0]?.busy)
        log.info("WAL checkpoint after prune was blocked by a reader; it will shrink later");
      log.info(
        { before: rec.pruned?.before, removed: rec.pruned?.removedRecords, path: this.path },
        "pruned",
      );
    }
    return rec;
  }

  private pruneBelow(
    cut: number,
    now: Date,
    nextSeq: number,
    reason: "bytes" | "age",
  ): JournalRecord | null {
    const db = this.db;
    db.exec("CREATE TEMP TABLE IF NOT EXISTS keep (seq INTEGER PRIMARY KEY); DELETE FROM keep;");
    const keep = db.prepare("INSERT OR IGNORE INTO keep (seq) VALUES (?)");
    const rewrites: { seq: number; flags: number; body: Buffer; base: number | null }[] = [];
    const rewrite = (seq: number, flags: number, k: EncodedBody): void => {
      const recordBits = flags & ~ENC_BITS;
      rewrites.push({ seq, flags: recordBits | k.enc, body: k.body, base: k.base });
    };
    const rowAt = db.prepare("SELECT seq, stream, watch, meta FROM records WHERE seq=?");
    const laterMarker = db.prepare(
      "SELECT rv FROM records WHERE object IS NULL AND type=? AND stream=? AND seq>? AND seq<? ORDER BY seq DESC LIMIT 1",
    );
    const keepVersion = (seq: number): void => {
      const r = rowAt.get(seq) as {
        seq: number;
        stream: number;
        watch: number | null;
        meta: string | null;
      };
      if (r.watch === DELETED) return;
      const m = laterMarker.get(T("baseline"), r.stream, r.seq, cut) as { rv: string } | undefined;
      const listRv = r.meta
        ? (JSON.parse(r.meta) as { p?: { listResourceVersion?: string } }).p?.listResourceVersion
        : undefined;
      if (m && m.rv !== listRv) return; // vanished during a gap: nothing exists to keep
      keep.run(seq);
    };
    const lasts = db
      .prepare(
        "SELECT object, max(seq) AS seq FROM records WHERE seq < ? AND object IS NOT NULL GROUP BY object",
      )
      .all(cut) as { object: number; seq: number }[];
    for (const l of lasts) keepVersion(l.seq);
    // Stream positions, open gaps, latest baselines, snapshots and earlier prune markers stay.
    for (const s of db.prepare("SELECT id, last_rv, last_baseline_seq FROM streams").all() as {
      id: number;
      last_rv: string | null;
      last_baseline_seq: number | null;
    }[]) {
      if (s.last_rv !== null) {
        const p = db
          .prepare(
            "SELECT max(seq) AS seq, max(object) AS object FROM records WHERE stream=? AND rv=?",
          )
          .get(s.id, s.last_rv) as {
          seq: number | null;
          object: number | null;
        };
        if (p.seq !== null && p.seq < cut) {
          if (p.object !== null) keepVersion(p.seq);
          keep.run(p.seq);
        }
      }
      if (s.last_baseline_seq !== null) keep.run(s.last_baseline_seq);
      db.prepare(
        "INSERT OR IGNORE INTO keep SELECT seq FROM records WHERE object IS NULL AND type=? AND stream=? AND seq>? AND seq<?",
      ).run(T("gap"), s.id, s.last_baseline_seq ?? 0, cut);
    }
    db.prepare(
      "INSERT OR IGNORE INTO keep SELECT seq FROM records WHERE object IS NULL AND type IN (?,?) AND seq<?",
    ).run(T("snapshot"), T("pruned"), cut);

    const gone = db
      .prepare(
        "SELECT count(*) AS n FROM records WHERE seq < ? AND seq NOT IN (SELECT seq FROM keep)",
      )
      .get(cut) as { n: number };
    if (gone.n === 0) return null;
    // The horizon is the newest moment below the cut: from then on the kept keyframes are complete.
    const span = db.prepare("SELECT max(observed_at) AS t FROM records WHERE seq < ?").get(cut) as {
      t: number;
    };
    // Every kept object row below the cut (a horizon version, or a record a checkpoint names, such
    // as a delete) loses the keyframe it was patched against, so it becomes a keyframe itself.
    const keptPatches = db
      .prepare(
        `SELECT r.seq, r.object, r.flags FROM keep k JOIN records r ON r.seq = k.seq
         WHERE r.seq < ? AND r.object IS NOT NULL AND r.body IS NOT NULL AND (r.flags & ${ENC_MASK}) <> ${ENC_KEYFRAME}`,
      )
      .all(cut) as { seq: number; object: number; flags: number }[];
    for (const r of keptPatches)
      rewrite(
        r.seq,
        r.flags,
        encodeKeyframe(this.store.versions.versionAt(r.object, r.seq).object, this.codec),
      );
    this.rebaseSurvivors(cut, rewrite);
    db.prepare("DELETE FROM records WHERE seq < ? AND seq NOT IN (SELECT seq FROM keep)").run(cut);
    noteRemoval(db);
    const upd = db.prepare("UPDATE records SET flags=?, body=?, base=? WHERE seq=?");
    for (const r of rewrites) upd.run(r.flags, r.body, r.base, r.seq);

    const before = new Date(span.t).toISOString();
    const prev = db.prepare("SELECT value FROM meta WHERE key='pruned_before'").get() as
      | { value: string }
      | undefined;
    const horizon = prev && prev.value > before ? prev.value : before;
    db.prepare(
      "INSERT INTO meta (key, value) VALUES ('pruned_before', ?) ON CONFLICT(key) DO UPDATE SET value=excluded.value",
    ).run(horizon);
    const stream = this.store.registry.ensureStream("*", "*");
    const observedAt = now.toISOString();
    const payload = { before: horizon, removedRecords: gone.n, reason };
    const eventId = recordIdFor("pruned", horizon, String(gone.n), observedAt, String(nextSeq));
    db.prepare(
      "INSERT INTO records (seq, event_id, type, stream, object, observed_at, watch, rv, flags, hash, meta, body) VALUES (?,?,?,?,NULL,?,NULL,NULL,?,NULL,?,NULL)",
    ).run(
      nextSeq,
      packId(eventId),
      T("pruned"),
      stream.id,
      now.getTime(),
      0,
      JSON.stringify({ x: payload }),
    );
    db.prepare(
      "INSERT INTO meta (key, value) VALUES ('last_seq', ?) ON CONFLICT(key) DO UPDATE SET value=excluded.value",
    ).run(String(nextSeq));
    return {
      type: "pruned",
      eventId,
      ingestSeq: nextSeq,
      clusterId: "*",
      streamId: "*",
      observedAt,
      synthetic: false,
      pruned: payload,
    };
  }

  /**
   * Patches at or past the cut whose keyframe lies below it would lose their base. Each object's
   * first such row becomes a keyframe and the rest are re-encoded against it (or a later one), so
   * nothing older than the horizon survives just to anchor a patch.
   */
  private rebaseSurvivors(
    cut: number,
    rewrite: (seq: number, flags: number, k: EncodedBody) => void,
  ): void {
    const rows = this.db
      .prepare(
        "SELECT seq, object, flags, body, base, rv FROM records WHERE seq >= ? AND base < ? ORDER BY object, seq",
      )
      .all(cut, cut) as {
      seq: number;
      object: number;
      flags: number;
      body: Buffer;
      base: number;
      rv: string | null;
    }[];
    let obj: number | null = null;
    let base: BaseVersion | null = null;
    for (const r of rows) {
      if (r.object !== obj) {
        obj = r.object;
        base = null;
      }
      const object = this.store.versions.objectOfRow(r.object, r);
      const md = (object as { metadata?: { resourceVersion?: unknown } }).metadata;
      const k = encodeObject(base, object, this.codec, md?.resourceVersion === r.rv ? r.rv : null);
      rewrite(r.seq, r.flags, k);
      base =
        k.base === null
          ? { object, seq: r.seq, chainLen: 0, keyframeBytes: k.keyframeBytes }
          : { ...base!, chainLen: k.chainLen };
    }
  }
}
