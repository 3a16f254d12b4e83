import type { RecordRow } from "../store/store";

/** Every column of a record row, as RecordRow names them. */
export const ROW_COLS =
  "seq, event_id, type, stream, object, observed_at, watch, rv, flags, hash, meta, body, base";

// Packed ids and hashes come back as hex text, because building a Buffer per column per row only to
// hex it in JavaScript is the dearest part of decoding a row. Text ids and hashes stay as they are.
const hexOf = (col: string): string =>
  `CASE WHEN typeof(r.${col})='blob' THEN lower(hex(r.${col})) ELSE r.${col} END AS ${col}`;
export const HEX_COLS = `r.seq, ${hexOf("event_id")}, r.type, r.stream, r.object, r.observed_at, r.watch, r.rv, r.flags, ${hexOf("hash")}, r.meta, r.body, r.base`;

export type RawRow = [
  number,
  string,
  number,
  number,
  number | null,
  number,
  number | null,
  string | null,
  number,
  string | null,
  string | null,
  Buffer | null,
  number | null,
];

/**
 * A COLS row fetched as an array, as an object. better-sqlite3 sets each named column of an
 * object row through the C++ API, which is slow for thirteen columns; a literal built here is
 * cheaper.
 */
export function fromRaw(a: RawRow): RecordRow {
  return {
    seq: a[0],
    event_id: a[1],
    type: a[2],
    stream: a[3],
    object: a[4],
    observed_at: a[5],
    watch: a[6],
    rv: a[7],
    flags: a[8],
    hash: a[9],
    meta: a[10],
    body: a[11],
    base: a[12],
  };
}
