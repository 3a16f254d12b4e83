import type { JournalRecord, RecordType } from "../../event";
import { decodeRow, typeCode } from "../store/rows";
import { BUCKETS_CTE, OBJECT_BUCKET } from "../store/schema";
import type { RecordRow, Store } from "../store/store";
import type { ObjectSelector } from "../types";
import { fromRaw, HEX_COLS as COLS, type RawRow } from "./columns";
import { sharedVersion } from "./shared-versions";

/** Object identity ids matching a selector (all groups when the group is left out). */
export function objectIds(store: Store, sel: ObjectSelector): number[] {
  if (sel.group !== undefined) {
    const id = store.registry.findObject(
      sel.clusterId,
      sel.group,
      sel.kind,
      sel.namespace,
      sel.name,
    );
    return id === null ? [] : [id];
  }
  const rows = store.sql
    .prep("SELECT id FROM objects WHERE cluster_id=? AND kind=? AND namespace=? AND name=?")
    .all(sel.clusterId, sel.kind, sel.namespace, sel.name) as { id: number }[];
  return rows.map(r => r.id);
}

const marks = (n: number): string => Array.from({ length: n }, () => "?").join(",");

/** Every stored version of an object, in ingest order, across deletes and re-creates. */
export function objectHistory(store: Store, sel: ObjectSelector): JournalRecord[] {
  return objectVersionsBetween(store, sel, 0, Number.MAX_SAFE_INTEGER);
}

// Versions share unchanged subtrees with their parsed keyframe (see shared-versions.ts).
function decodeVersions(store: Store, rows: RecordRow[]): JournalRecord[] {
  const keyframes = new Map<number, unknown>();
  return rows.map(row => decodeRow(store, row, sharedVersion(store, row.object!, row, keyframes)));
}

/**
 * The ingest positions (seq) of an object's stored versions, oldest first. The object index holds
 * them, so no row and no body is read: a page of a long history starts from this list.
 */
export function objectVersionSeqs(store: Store, sel: ObjectSelector): number[] {
  store.registry.refreshStreams();
  const ids = objectIds(store, sel);
  if (ids.length === 0) return [];
  const range = store.buckets.range(0, Number.MAX_SAFE_INTEGER);
  if (!range) return [];
  const seqs = store.sql
    .prep(
      `${BUCKETS_CTE} SELECT r.seq FROM b CROSS JOIN records r ON r.${OBJECT_BUCKET}=b.k AND r.object IN (${marks(ids.length)})`,
    )
    .pluck()
    .all(...range, ...ids) as number[];
  return seqs.sort((a, b) => a - b);
}

/**
 * An object's versions stored from one position to another (both included, from objectVersionSeqs),
 * decoded, oldest first: one page of its history, read bucket by bucket like the whole of it.
 */
export function objectVersionsBetween(
  store: Store,
  sel: ObjectSelector,
  fromSeq: number,
  toSeq: number,
): JournalRecord[] {
  store.registry.refreshStreams();
  const ids = objectIds(store, sel);
  const range = store.buckets.range(fromSeq, toSeq);
  if (ids.length === 0 || !range) return [];
  const rows = (
    store.sql
      .prepRaw(
        `${BUCKETS_CTE} SELECT ${COLS} FROM b CROSS JOIN records r ON r.${OBJECT_BUCKET}=b.k AND r.object IN (${marks(ids.length)}) AND r.seq BETWEEN ? AND ?`,
      )
      .all(...range, ...ids, fromSeq, toSeq) as RawRow[]
  ).map(fromRaw);
  // Sorting here rather than in SQL keeps the bodies out of a temporary B-tree; the rows arrive
  // nearly sorted already (bucket by bucket, and by seq within a bucket for each object).
  rows.sort((a, b) => a.seq - b.seq);
  return decodeVersions(store, rows);
}

/** Control records (baseline markers, gaps, snapshots, ...) of a type, optionally for one stream. */
export function controlRecords(store: Store, type: RecordType, streamId?: string): JournalRecord[] {
  store.registry.refreshStreams();
  const args: unknown[] = [typeCode(type)];
  let extra = "";
  if (streamId) {
    const s = store.registry.streamsById.get(streamId);
    if (!s) return [];
    extra = " AND r.stream = ?";
    args.push(s.id);
  }
  const rows = store.sql
    .prep(
      `SELECT ${COLS} FROM records r WHERE r.object IS NULL AND r.type = ?${extra} ORDER BY r.seq`,
    )
    .all(...args) as RecordRow[];
  return rows.map(r => decodeRow(store, r));
}
