// A cheap mark of everything an object's timeline is read from, for answer caches: it changes when
// the object gains a record, and when one of its streams gains a record that moves the timeline's
// coverage or attribution (a gap, a baseline marker, a coverage change, an audit correlation).
import { OBJECT_BUCKET, TYPE_CODES } from "../store/schema";
import type { Store } from "../store/store";
import type { ObjectSelector } from "../types";
import { objectIds } from "./history";

// The record types of a stream that change a timeline of one of its objects; snapshots and
// checkpoints do not.
const MARK_TYPES = (["baseline", "gap", "coverage_change", "audit_correlation"] as const).map(t =>
  TYPE_CODES.indexOf(t),
);

/**
 * The newest position of the object's records and of the marking records of each stream, as one
 * string. Every probe is the last entry of an index range (the object index bucket by bucket from
 * the newest, records_control per type and stream), so a mark costs a few index look-ups.
 */
export function objectMark(
  store: Store,
  sel: ObjectSelector,
  streamIds: readonly string[],
): string {
  store.registry.refreshStreams();
  const ids = objectIds(store, sel);
  let newest = 0;
  const range = ids.length > 0 ? store.buckets.range(0, Number.MAX_SAFE_INTEGER) : null;
  if (range) {
    const inBucket = store.sql
      .prep(
        `SELECT max(seq) FROM records WHERE ${OBJECT_BUCKET} = ? AND object IN (${ids.map(() => "?").join(",")})`,
      )
      .pluck();
    for (let k = range[1]; k >= range[0] && newest === 0; k--)
      newest = (inBucket.get(k, ...ids) as number | null) ?? 0;
  }
  const control = store.sql
    .prep("SELECT max(seq) FROM records WHERE object IS NULL AND type = ? AND stream = ?")
    .pluck();
  const parts = [String(ids.length), String(newest)];
  for (const id of streamIds) {
    const s = store.registry.streamsById.get(id);
    parts.push(
      s ? MARK_TYPES.map(t => (control.get(t, s.id) as number | null) ?? 0).join(".") : "-",
    );
  }
  return parts.join(":");
}
