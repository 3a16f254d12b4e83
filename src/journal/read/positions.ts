// Where objects stood at a time, and the one rule for an object that is gone: a DELETED event,
// or a later relist of its stream that did not list it.
import { OBJECT_BUCKET, TYPE_CODES, WATCH_CODES } from "../store/schema";
import type { RecordRow, Store } from "../store/store";
import { ROW_COLS } from "./columns";
import type { Absence, BaselineMark, ObjectIdentity, ObjectPosition } from "../types";

const BASELINE = TYPE_CODES.indexOf("baseline");
const DELETED = WATCH_CODES.indexOf("DELETED");

/** A position as the view made it: the public fields plus the row they came from. */
export interface StoredPosition extends ObjectPosition {
  row: RecordRow;
}

/** The row behind a position; a position from somewhere else is a programming error. */
export function rowOfPosition(pos: ObjectPosition): RecordRow {
  const row = (pos as Partial<StoredPosition>).row;
  if (!row) throw new Error("this position was not made by a journal view");
  return row;
}

/** The newest row of an object observed at or before a time, read with the given columns. */
const newestAtTime = (cols: string) =>
  `SELECT ${cols} FROM records WHERE ${OBJECT_BUCKET}=? AND object=? AND observed_at<=? ORDER BY seq DESC LIMIT 1`;

// Made once: a snapshot asks for every object, and a template per call is a string per object.
const LATEST_AT_TIME = newestAtTime(ROW_COLS);

/**
 * What a position reads when nobody decodes its object (positionsPage: a count, each stream's
 * watermark): no body, ids, hash or base, and meta only where absenceOf reads it (baseline rows).
 * A snapshot of 10k objects read every body as a Buffer of its own, most of its allocation.
 */
const HEADER_AT_TIME = newestAtTime(
  `seq, NULL AS event_id, type, stream, object, observed_at, watch, rv, flags, NULL AS hash, CASE WHEN type=${BASELINE} THEN meta END AS meta, NULL AS body, NULL AS base`,
);

function rowAtTime(
  store: Store,
  sql: string,
  objectId: number,
  atMs: number,
): RecordRow | undefined {
  const stmt = store.sql.prep(sql);
  return store.buckets.newest(
    Number.MAX_SAFE_INTEGER,
    b => stmt.get(b, objectId, atMs) as RecordRow | undefined,
    atMs,
  );
}

/** An object's newest record observed at or before a time. */
export function latestAtTime(store: Store, objectId: number, atMs: number): RecordRow | undefined {
  return rowAtTime(store, LATEST_AT_TIME, objectId, atMs);
}

/** latestAtTime without what only decoding the object needs (HEADER_AT_TIME). */
export function latestHeaderAtTime(
  store: Store,
  objectId: number,
  atMs: number,
): RecordRow | undefined {
  return rowAtTime(store, HEADER_AT_TIME, objectId, atMs);
}

function listOf(row: RecordRow): string | undefined {
  if (!row.meta) return undefined;
  const meta = JSON.parse(row.meta) as { p?: { listResourceVersion?: string } };
  return meta.p?.listResourceVersion;
}

/**
 * Whether an object whose last record at or before atMs is row was gone at atMs. A relist after
 * the row that did not include the object means it vanished while the stream was not watching.
 */
export function absenceOf(
  row: RecordRow,
  marks: readonly BaselineMark[],
  atMs: number,
): Absence | null {
  if (row.watch === DELETED)
    return { reason: "deleted", atMs: row.observed_at, resourceVersion: row.rv };
  let later: BaselineMark | undefined;
  for (let i = marks.length - 1; i >= 0 && marks[i].seq > row.seq; i--) {
    if (marks[i].observedAtMs <= atMs) {
      later = marks[i];
      break;
    }
  }
  if (!later) return null;
  // The object's own row of that very relist is not a disappearance.
  if (row.type === BASELINE && listOf(row) === later.listResourceVersion) return null;
  return { reason: "vanished-in-gap", atMs: later.observedAtMs, resourceVersion: null };
}

/** The position of the object whose last record at or before atMs is row. */
export function positionOf(
  store: Store,
  identity: ObjectIdentity,
  row: RecordRow,
  atMs: number,
  marksOf: (streamId: string) => readonly BaselineMark[],
): StoredPosition {
  const streamId = store.registry.streamOf(row.stream, row.seq).streamId;
  const absence = absenceOf(row, marksOf(streamId), atMs);
  return {
    identity,
    streamId,
    seq: row.seq,
    resourceVersion: row.rv,
    observedAtMs: row.observed_at,
    exists: absence === null,
    absence,
    row,
  };
}
