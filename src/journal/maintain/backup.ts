import { existsSync, renameSync, rmSync } from "node:fs";
import { connect } from "../store/connection";
import { toJournalError } from "../errors";
import { JournalError } from "../types";

export interface BackupOptions {
  /** Replace an existing file at the destination. */
  overwrite?: boolean;
  /** Called after each step with the pages copied so far and the source's page count. */
  onProgress?: (copied: number, total: number) => void;
  nativeBinding?: string;
}

export interface BackupResult {
  path: string;
  pages: number;
}

/**
 * Copies a journal, live or not, with SQLite's online backup API. A plain file copy of a WAL
 * journal misses every commit still in the -wal file; the backup reads through SQLite, so the copy
 * holds exactly the commits made before it finished, and is a single self-contained file. It is
 * written beside the destination and renamed into place, so a failed backup leaves nothing there.
 */
export async function backupJournal(
  from: string,
  to: string,
  opts: BackupOptions = {},
): Promise<BackupResult> {
  if (existsSync(to) && !opts.overwrite) throw new JournalError(`${to} already exists`, "INVALID");
  const db = connect(from, { readonly: true, nativeBinding: opts.nativeBinding });
  const partial = `${to}.partial`;
  rmSync(partial, { force: true });
  try {
    // The first step copies 100 pages; after it the rest goes in one step, because a commit by the
    // recorder between two steps restarts the copy, and small steps under a steady writer never end.
    const r = await db.backup(partial, {
      progress: ({ totalPages, remainingPages }) => {
        opts.onProgress?.(totalPages - remainingPages, totalPages);
        return Math.max(100, remainingPages);
      },
    });
    renameSync(partial, to);
    return { path: to, pages: r.totalPages };
  } catch (err) {
    rmSync(partial, { force: true });
    throw toJournalError(err, `backup of ${from} to ${to}`);
  } finally {
    db.close();
  }
}
