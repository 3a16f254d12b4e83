import { existsSync } from "node:fs";
import { resolve } from "node:path";
import Database from "better-sqlite3";
import { toJournalError } from "../errors";
import { JournalError } from "../types";
import { migrate } from "./schema";

/** Connection settings shared by the writer and the views. */
export const CONNECTION_DEFAULTS = {
  busyTimeoutMs: 5000,
  pageCacheKiB: 65536,
  readerMmapBytes: 1 << 30,
  /** Page size of a new file (an existing file keeps its own). */
  pageSize: 16384,
  sync: "FULL" as const,
};

export interface ConnectionOptions {
  readonly: boolean;
  /** Writer only: false refuses to create a missing file. */
  create?: boolean;
  /** Reader only: read an idle journal (no -wal file) as an immutable file; see JournalViewOptions. */
  idleSnapshot?: boolean;
  /** Reader only: bytes to map (default readerMmapBytes); see JournalViewOptions. */
  mmapBytes?: number;
  /** Page cache in KiB: the writer's default is pageCacheKiB, a reader's SQLite's own. */
  pageCacheKiB?: number;
  busyTimeoutMs?: number;
  nativeBinding?: string;
  sync?: "FULL" | "NORMAL";
}

/**
 * The native addon every open in this process or worker thread loads unless the open names one.
 * One addon serves a whole process (a bundled build cannot find the package's own, D3), so the
 * entry points (recorder, sidecar and its workers, CLI) set it once from KRPLY_SQLITE_BINDING
 * instead of threading it through every caller.
 */
let processBinding: string | undefined;

/** Sets (or, with undefined, clears) the addon every later open loads by default. */
export function useNativeBinding(path: string | undefined): void {
  processBinding = path;
}

/** The addon opens load by default; undefined: the installed better-sqlite3's own. */
export function nativeBindingInUse(): string | undefined {
  return processBinding;
}

// better-sqlite3 reads SQLITE_USE_URI once, when its addon loads, which happens at the first open.
process.env.SQLITE_USE_URI ??= "1";

/** A path as an SQLite URI that opens the file immutable (no locks, no -wal/-shm). */
function immutableUri(path: string): string {
  const abs = resolve(path).replace(/[%?#]/g, c => `%${c.charCodeAt(0).toString(16)}`);
  return `file:${abs}?immutable=1`;
}

function openFile(path: string, dbOpts: Database.Options, immutable: boolean): Database.Database {
  if (immutable) {
    try {
      return new Database(immutableUri(path), dbOpts);
    } catch {
      // The addon was loaded before SQLITE_USE_URI was set (another module opened SQLite first), so
      // the URI reads as a file name; a plain read-only open still answers, it just needs -shm.
    }
  }
  return new Database(path, dbOpts);
}

/**
 * Opens the file and brings it to the current schema: the writer migrates, a read-only view only
 * checks (a newer schema fails with SCHEMA_NEWER, an older one with READONLY).
 */
export function connect(path: string, opts: ConnectionOptions): Database.Database {
  const mustExist = opts.readonly || opts.create === false;
  if (mustExist && !existsSync(path))
    throw new JournalError(`journal ${path} does not exist`, "NOT_FOUND");
  const dbOpts: Database.Options = { readonly: opts.readonly, fileMustExist: mustExist };
  const binding = opts.nativeBinding ?? processBinding;
  if (binding) dbOpts.nativeBinding = binding;
  // Without a -wal file nobody has the journal open; an immutable read then takes no locks and
  // creates no -wal/-shm, which is what lets a reader work in a read-only directory.
  const immutable = opts.readonly && opts.idleSnapshot === true && !existsSync(`${path}-wal`);
  let db: Database.Database;
  try {
    db = openFile(path, dbOpts, immutable);
  } catch (err) {
    throw toJournalError(err, `open ${path}`);
  }
  try {
    db.pragma(`busy_timeout = ${opts.busyTimeoutMs ?? CONNECTION_DEFAULTS.busyTimeoutMs}`);
    if (opts.readonly) {
      // Readers (the CLI, and the planned query sidecar) fetch one row per version from all over
      // the file; mapping it saves a read() and a copy per page. The writer does not map it, so its
      // resident memory stays that of its caches rather than growing with the file.
      db.pragma(`mmap_size = ${opts.mmapBytes ?? CONNECTION_DEFAULTS.readerMmapBytes}`);
      if (opts.pageCacheKiB !== undefined) db.pragma(`cache_size = -${opts.pageCacheKiB}`);
    } else {
      // Fewer, larger pages cut the WAL frames each commit writes. SQLite applies it to new files only.
      db.pragma(`page_size = ${CONNECTION_DEFAULTS.pageSize}`);
      db.pragma("journal_mode = WAL");
      // FULL: a committed append survives power loss. NORMAL: survives a process crash, may lose
      // the last commits on power loss, never corrupts. See docs/consistency.md.
      db.pragma(`synchronous = ${opts.sync ?? CONNECTION_DEFAULTS.sync}`);
      // A batch inserts into the index pages of many objects and streams; a larger page cache keeps
      // the hot ones in memory from one commit to the next.
      db.pragma(`cache_size = -${opts.pageCacheKiB ?? CONNECTION_DEFAULTS.pageCacheKiB}`);
    }
    migrate(db, opts.readonly);
    return db;
  } catch (err) {
    db.close();
    throw toJournalError(err, `open ${path}`);
  }
}
