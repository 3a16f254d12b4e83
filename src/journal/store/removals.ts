import type Database from "better-sqlite3";

/**
 * A count of the times records were removed (retention prunes, expired snapshot records), kept in
 * meta. Appends only ever add records after the newest seq, so while the count stands still the
 * records between two stored seqs stay exactly as they were read: a reader may keep a full page of
 * them (the sidecar's cache of event pages) and check this one value before serving it again.
 */
export const REMOVALS_KEY = "removals";

/** Counts one removal; call it in the transaction that deletes the records. */
export function noteRemoval(db: Database.Database): void {
  db.prepare(
    `INSERT INTO meta (key, value) VALUES ('${REMOVALS_KEY}', '1')
     ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1`,
  ).run();
}
