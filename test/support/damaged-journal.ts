// A real journal file with real damage: records written through the journal, then pages in the middle of
// the file overwritten with garbage, as a failing disk or a torn copy leaves them.
import Database from "better-sqlite3";
import { closeSync, openSync, readSync, statSync, writeSync } from "node:fs";
import { eventRecord, type JournalRecord } from "../../src/event";
import { openJournal } from "../../src/journal";
import { at, checkpointsOf, configMap, streamKey } from "./journal-fixtures";

/** Streams of the damaged journal: ConfigMaps of three namespaces. */
export const DAMAGED_STREAMS = ["ns-a", "ns-b", "ns-c"].map(ns =>
  streamKey("configmaps", "", "v1", ns),
);

/** The records written: `perStream` versions of 20 ConfigMaps in each stream, interleaved. */
export function damagedJournalRecords(perStream: number): JournalRecord[] {
  const out: JournalRecord[] = [];
  for (let i = 0; i < perStream; i++) {
    for (const key of DAMAGED_STREAMS) {
      const name = `cm-${i % 20}`;
      const rv = out.length + 1;
      out.push(
        eventRecord({
          stream: key,
          watchType: "MODIFIED",
          object: configMap(name, key.namespace, `uid-${key.namespace}-${name}`, rv, {
            v: String(i),
            // Incompressible bulk, so the file has many pages and the damage hits record pages.
            pad: Buffer.from(
              Array.from({ length: 600 }, (_, j) => (j * 31 + i * 17 + rv) % 256),
            ).toString("base64"),
          }),
          observedAt: at(rv),
        }),
      );
    }
  }
  return out;
}

/** Writes the records into a new journal at path and closes it with the WAL folded into the file. */
export function writeJournal(path: string, records: JournalRecord[]): void {
  const j = openJournal(path, { sync: "NORMAL" });
  for (let i = 0; i < records.length; i += 300) {
    const batch = records.slice(i, i + 300);
    j.append({ records: batch, checkpoints: checkpointsOf(batch) });
  }
  j.checkpointWal();
  j.close();
}

/**
 * Overwrites `pages` whole pages with garbage, starting at `fraction` of the file. Returns the byte
 * range damaged. The page size is read from the file header.
 */
export function damagePages(path: string, fraction = 0.5, pages = 2): { from: number; to: number } {
  const fd = openSync(path, "r+");
  try {
    const header = Buffer.alloc(100);
    readSync(fd, header, 0, 100, 0);
    const raw = header.readUInt16BE(16);
    const pageSize = raw === 1 ? 65536 : raw;
    const count = Math.floor(statSync(path).size / pageSize);
    const first = Math.max(2, Math.floor(count * fraction));
    pages = Math.min(pages, count - first + 1);
    const garbage = Buffer.alloc(pageSize * pages);
    for (let i = 0; i < garbage.length; i++) garbage[i] = (i * 131 + 7) % 251;
    writeSync(fd, garbage, 0, garbage.length, (first - 1) * pageSize);
    return { from: (first - 1) * pageSize, to: (first - 1 + pages) * pageSize };
  } finally {
    closeSync(fd);
  }
}

/**
 * Makes one record's stored body undecodable while SQLite's own structure stays sound: only a check
 * that decodes that record (the full check, or the tail check when it is among the newest) sees it.
 */
export function garbleRecordBody(path: string, seq: number): void {
  const db = new Database(path);
  try {
    const changed = db
      .prepare("UPDATE records SET body = x'00ff00' WHERE seq = ?")
      .run(seq).changes;
    if (changed !== 1) throw new Error(`no record ${seq} with a body in ${path}`);
  } finally {
    db.close();
  }
}
