import { decodeRow, typeCode } from "../store/rows";
import { BUCKETS_CTE, OBJECT_BUCKET } from "../store/schema";
import type { RecordRow, Store } from "../store/store";
import { JournalError, type EventPage, type EventQuery } from "../types";
import { fromRaw, HEX_COLS as COLS, type RawRow } from "./columns";

const DEFAULT_LIMIT = 500;
const MAX_LIMIT = 5000;

/** Encodes a position as an opaque cursor. */
export function encodeCursor(seq: number): string {
  return Buffer.from(JSON.stringify({ v: 1, s: seq })).toString("base64url");
}

function decodeCursor(cursor: string): number {
  try {
    const c = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as {
      v?: number;
      s?: number;
    };
    if (c.v === 1 && typeof c.s === "number" && Number.isInteger(c.s)) return c.s;
  } catch (err) {
    throw new JournalError(`invalid cursor "${cursor}"`, "INVALID", { cause: err });
  }
  throw new JournalError(`invalid cursor "${cursor}"`, "INVALID");
}

function ms(iso: string, what: string): number {
  const v = Date.parse(iso);
  if (Number.isNaN(v)) throw new JournalError(`${what} "${iso}" is not a date`, "INVALID");
  return v;
}

/**
 * Up to this many matching objects, an event query walks their rows through the object index;
 * past it the matches are dense enough that a scan in seq order fills a page sooner.
 */
const INDEXED_OBJECTS_MAX = 64;

type Filter = { where: string[]; args: unknown[] };

function filter(): Filter {
  return { where: [], args: [] };
}

function add(f: Filter, clause: string, ...values: unknown[]): void {
  f.where.push(clause);
  f.args.push(...values);
}

/** The identity filter (cluster included) of a kind/namespace/name query, on objects aliased o. */
function objectFilter(q: EventQuery): Filter {
  const f = filter();
  if (q.clusterId) add(f, "o.cluster_id = ?", q.clusterId);
  if (q.kind) add(f, "o.kind = ?", q.kind);
  if (q.namespace !== undefined) add(f, "o.namespace = ?", q.namespace);
  if (q.name) add(f, "o.name = ?", q.name);
  return f;
}

/** Ids of the objects f selects, at most limit + 1 of them. */
function objectsOf(store: Store, f: Filter, limit: number): number[] {
  return store.sql
    .prep(`SELECT o.id FROM objects o WHERE ${f.where.join(" AND ")} ORDER BY o.id LIMIT ?`)
    .pluck()
    .all(...f.args, limit + 1) as number[];
}

/**
 * The first `want` rows after seq `after` of a few objects, found bucket by bucket through the
 * object index. The window of buckets doubles while it comes back short, so a busy object costs
 * one small window and a rare one a handful of statements however long the journal is.
 */
function rowsOfObjects(
  store: Store,
  ids: number[],
  rowFilter: Filter,
  after: number,
  want: number,
): RecordRow[] {
  const range = store.buckets.range(after + 1, Number.MAX_SAFE_INTEGER);
  if (!range) return [];
  const idList = ids.map(() => "?").join(",");
  const stmt = store.sql.prepRaw(
    `${BUCKETS_CTE} SELECT ${COLS} FROM b CROSS JOIN records r ON r.${OBJECT_BUCKET}=b.k
       AND r.object IN (${idList}) WHERE ${["r.seq > ?", ...rowFilter.where].join(" AND ")}
       ORDER BY r.seq LIMIT ?`,
  );
  const out: RecordRow[] = [];
  for (let lo = range[0], width = 1; lo <= range[1] && out.length < want; lo += width, width *= 2) {
    const hi = Math.min(range[1], lo + width - 1);
    const rows = stmt.all(lo, hi, ...ids, after, ...rowFilter.args, want - out.length) as RawRow[];
    for (const r of rows) out.push(fromRaw(r));
  }
  return out;
}

/** Pages through records in ingest order with optional filters. */
export function queryEvents(store: Store, q: EventQuery): EventPage {
  store.registry.refreshStreams();
  const after = q.cursor ? decodeCursor(q.cursor) : 0;
  const limit = Math.min(Math.max(q.limit ?? DEFAULT_LIMIT, 1), MAX_LIMIT);
  // Filters on the record row itself; cluster and object filters differ by the path taken.
  const rf = filter();
  if (q.streamId) {
    const s = store.registry.streamsById.get(q.streamId);
    if (!s) return { records: [], nextCursor: null };
    add(rf, "r.stream = ?", s.id);
  }
  if (q.since) add(rf, "r.observed_at >= ?", ms(q.since, "since"));
  if (q.until) add(rf, "r.observed_at <= ?", ms(q.until, "until"));
  if (q.types && q.types.length > 0)
    add(rf, `r.type IN (${q.types.map(() => "?").join(",")})`, ...q.types.map(typeCode));

  let rows: RecordRow[];
  const of = q.kind || q.namespace !== undefined || q.name ? objectFilter(q) : null;
  const ids = of ? objectsOf(store, of, INDEXED_OBJECTS_MAX) : [];
  if (of && ids.length === 0) return { records: [], nextCursor: null };
  if (of && ids.length <= INDEXED_OBJECTS_MAX) {
    rows = rowsOfObjects(store, ids, rf, after, limit + 1);
  } else {
    const f = filter();
    let join = "";
    add(f, "r.seq > ?", after);
    if (of) {
      // Many objects match: their identity filter goes into a join instead of an id list.
      join = " JOIN objects o ON o.id = r.object";
      add(f, of.where.join(" AND "), ...of.args);
    } else if (q.clusterId) {
      join = " JOIN streams s ON s.id = r.stream";
      add(f, "(s.cluster_id = ? OR s.stream_id = '*')", q.clusterId);
    }
    f.where.push(...rf.where);
    f.args.push(...rf.args);
    rows = store.sql
      .prep(
        `SELECT ${COLS} FROM records r${join} WHERE ${f.where.join(" AND ")} ORDER BY r.seq LIMIT ?`,
      )
      .all(...f.args, limit + 1) as RecordRow[];
  }
  const more = rows.length > limit;
  const page = more ? rows.slice(0, limit) : rows;
  const records = page.map(r =>
    decodeRow(store, q.includeObjects === false ? { ...r, body: null } : r),
  );
  return { records, nextCursor: more ? encodeCursor(page[page.length - 1].seq) : null };
}
