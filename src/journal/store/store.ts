import type Database from "better-sqlite3";
import { parseStreamId } from "../../event/stream-id";
import type { StreamKey } from "../../event/schema";
import { IdentityIds } from "./identity-ids";
import { LruCache, type KeyframePosition } from "./cache";
import {
  applyPatchBody,
  ENC_KEYFRAME,
  ENC_MASK,
  ENC_PATCH,
  ENC_STAR,
  keyframeText,
  type BaseVersion,
} from "../codec/codec";
import { ObjectBuckets } from "./buckets";
import { BUCKETS_CTE, OBJECT_BUCKET } from "./schema";

export interface StreamRow {
  id: number;
  streamId: string;
  key: StreamKey | null; // null for the global "*" pseudo-stream
  clusterId: string;
  version: string;
}

export interface ObjectRow {
  id: number;
  clusterId: string;
  group: string;
  kind: string;
  namespace: string;
  name: string;
}

export interface RecordRow {
  seq: number;
  event_id: Buffer | string;
  type: number;
  stream: number;
  object: number | null;
  observed_at: number;
  watch: number | null;
  rv: string | null;
  flags: number;
  hash: Buffer | string | null;
  meta: string | null;
  body: Buffer | null;
  /** Keyframe seq of a star patch. */
  base: number | null;
}

/** The columns a stored object version is rebuilt from. */
export interface BodyRow {
  seq: number;
  flags: number;
  body: Buffer | null;
  base: number | null;
  rv: string | null;
}

// Bound parameters per keyframe query; SQLite's limit is far higher, but statements are cached per shape.
const KEYFRAME_CHUNK = 500;

/** Shared registry of streams and object identities over one connection. */
export class Store {
  readonly streams = new Map<number, StreamRow>();
  readonly streamsById = new Map<string, StreamRow>();
  /** Whether the last objectId() call created the identity (so it has no versions yet). */
  lastCreated = false;
  private readonly objectIds = new IdentityIds(50_000);
  private readonly objectRows = new LruCache<number, ObjectRow>(50_000);
  private readonly keyframeTexts = new LruCache<number, string>(1024);
  private readonly stmt;
  /** Finds an object's rows through the bucketed object index. */
  readonly buckets: ObjectBuckets;

  constructor(readonly db: Database.Database) {
    this.buckets = new ObjectBuckets(db, sql => this.prep(sql));
    this.stmt = {
      insertStream: db.prepare(
        "INSERT INTO streams (stream_id, cluster_id, grp, version, resource, namespace, selector) VALUES (?,?,?,?,?,?,?)",
      ),
      findObject: db.prepare(
        "SELECT id FROM objects WHERE cluster_id=? AND kind=? AND namespace=? AND name=? AND grp=?",
      ),
      insertObject: db.prepare(
        "INSERT INTO objects (cluster_id, kind, namespace, name, grp) VALUES (?,?,?,?,?)",
      ),
      objectById: db.prepare(
        "SELECT id, cluster_id, grp, kind, namespace, name FROM objects WHERE id=?",
      ),
      // Object-row statements take the index bucket first (see buckets.ts).
      chain: db.prepare(
        `SELECT seq, flags, body FROM records WHERE ${OBJECT_BUCKET}=? AND object=? AND seq<=? AND body IS NOT NULL ORDER BY seq DESC`,
      ),
      latest: db.prepare(
        `SELECT seq, flags, body, base, rv FROM records WHERE ${OBJECT_BUCKET}=? AND object=? AND seq<=? AND body IS NOT NULL ORDER BY seq DESC LIMIT 1`,
      ),
      bodyAt: db.prepare("SELECT seq, flags, body, base, rv FROM records WHERE seq=?"),
      patchesSince: db.prepare(
        `${BUCKETS_CTE} SELECT count(*) AS n FROM b CROSS JOIN records r ON r.${OBJECT_BUCKET}=b.k AND r.object=? AND r.seq>?`,
      ),
    };
    this.reloadStreams();
  }

  private readonly statements = new Map<string, Database.Statement>();

  /** Like prep, but the statement returns rows as arrays (kept apart from prep's object-mode one). */
  prepRaw(sql: string): Database.Statement {
    return this.cached(`raw:${sql}`, () => this.db.prepare(sql).raw(true));
  }

  /** A prepared statement for sql, compiled once per connection (readers build few distinct shapes). */
  prep(sql: string): Database.Statement {
    return this.cached(sql, () => this.db.prepare(sql));
  }

  private cached(key: string, make: () => Database.Statement): Database.Statement {
    let st = this.statements.get(key);
    if (!st) {
      st = make();
      this.statements.set(key, st);
    }
    return st;
  }

  /** An object's newest row with a stored body at or before seq. */
  latestRow(objectId: number, seq: number): BodyRow | undefined {
    return this.buckets.newest(
      seq,
      b => this.stmt.latest.get(b, objectId, seq) as BodyRow | undefined,
    );
  }

  /**
   * Brings the stream maps up to date for a read. The fields kept (ids, cluster, version) never
   * change once a stream row exists, so only a new stream calls for a reload; parsing every stream
   * id again on each read cost a history read about 0.2 ms.
   */
  refreshStreams(): void {
    const top = this.prep("SELECT max(id) FROM streams").pluck().get() as number | null;
    if (top === this.topStream) return;
    this.reloadStreams();
  }

  private topStream: number | null = -1;

  /** Re-reads the stream registry (after a rolled-back transaction or another writer's append). */
  reloadStreams(): void {
    this.streams.clear();
    this.streamsById.clear();
    const rows = this.prep("SELECT id, stream_id, cluster_id, version FROM streams").all() as {
      id: number;
      stream_id: string;
      cluster_id: string;
      version: string;
    }[];
    let top: number | null = null;
    for (const r of rows) {
      this.remember(r.id, r.stream_id, r.cluster_id, r.version);
      if (top === null || r.id > top) top = r.id;
    }
    this.topStream = top;
  }

  private remember(id: number, streamId: string, clusterId: string, version: string): StreamRow {
    const key = streamId === "*" ? null : parseStreamId(streamId);
    const row: StreamRow = { id, streamId, key, clusterId, version };
    this.streams.set(id, row);
    this.streamsById.set(streamId, row);
    return row;
  }

  /** Returns the stream row for an id, registering it (inside the caller's transaction) if new. */
  ensureStream(streamId: string, clusterId: string): StreamRow {
    const known = this.streamsById.get(streamId);
    if (known) return known;
    if (streamId === "*") {
      const id = Number(this.stmt.insertStream.run("*", "*", "", "", "", "", "").lastInsertRowid);
      return this.remember(id, "*", "*", "");
    }
    const k = parseStreamId(streamId);
    if (k.clusterId !== clusterId) {
      throw new Error(`record clusterId "${clusterId}" does not match its stream "${streamId}"`);
    }
    const id = Number(
      this.stmt.insertStream.run(
        streamId,
        k.clusterId,
        k.group,
        k.version,
        k.resource,
        k.namespace,
        k.selector,
      ).lastInsertRowid,
    );
    return this.remember(id, streamId, k.clusterId, k.version);
  }

  /** Finds an object identity id; creates it when create is set. */
  objectId(
    clusterId: string,
    group: string,
    kind: string,
    namespace: string,
    name: string,
    create: boolean,
  ): number | null {
    const hit = this.objectIds.get(clusterId, group, kind, namespace, name);
    this.lastCreated = false;
    if (hit !== undefined) return hit;
    const row = this.stmt.findObject.get(clusterId, kind, namespace, name, group) as
      | { id: number }
      | undefined;
    let id = row?.id;
    this.lastCreated = false;
    if (id === undefined) {
      if (!create) return null;
      this.lastCreated = true;
      id = Number(
        this.stmt.insertObject.run(clusterId, kind, namespace, name, group).lastInsertRowid,
      );
    }
    this.objectIds.set(clusterId, group, kind, namespace, name, id);
    return id;
  }

  /** Object identity row by id. */
  objectRow(id: number): ObjectRow {
    const hit = this.objectRows.get(id);
    if (hit) return hit;
    const r = this.stmt.objectById.get(id) as
      | {
          id: number;
          cluster_id: string;
          grp: string;
          kind: string;
          namespace: string;
          name: string;
        }
      | undefined;
    if (!r) throw new Error(`object id ${id} missing from objects table`);
    const row: ObjectRow = {
      id,
      clusterId: r.cluster_id,
      group: r.grp,
      kind: r.kind,
      namespace: r.namespace,
      name: r.name,
    };
    this.objectRows.set(id, row);
    return row;
  }

  /** Remembers an identity row read in bulk elsewhere, so decoding its records needs no look-up. */
  rememberObject(row: ObjectRow): void {
    this.objectRows.set(row.id, row);
  }

  /** Forgets cached object ids, since a rolled-back transaction may have created some. */
  forgetObjects(): void {
    this.objectIds.clear();
    this.objectRows.clear();
    // Seqs of a rolled-back batch are reused, so cached texts keyed by them must go too.
    this.keyframeTexts.clear();
    this.buckets.forget();
  }

  /**
   * The keyframe an object's next version should be diffed against, read from disk after a cache
   * miss: the keyframe of its newest row. Null when the object has no versions, or when its newest
   * row belongs to a pre-v4 chain (the writer then starts a fresh keyframe). A known position
   * (remembered when the writer's cache evicted it) skips the search.
   */
  currentBase(objectId: number, known?: KeyframePosition): BaseVersion | null {
    if (known) {
      const text = this.keyframeJsonAt(objectId, known.seq);
      // A literal, not {...known, object}: V8 reads fields of spread-and-extend objects slowly.
      return {
        object: JSON.parse(text),
        seq: known.seq,
        chainLen: known.chainLen,
        keyframeBytes: known.keyframeBytes,
      };
    }
    const row = this.latestRow(objectId, Number.MAX_SAFE_INTEGER);
    if (!row?.body) return null;
    let kfSeq = row.seq;
    let text: string;
    if ((row.flags & ENC_MASK) === ENC_KEYFRAME) text = this.keyframeJson(row);
    else if (row.flags & ENC_STAR && row.base !== null) {
      kfSeq = row.base;
      text = this.keyframeJsonAt(objectId, kfSeq);
    } else return null;
    const range = this.buckets.range(kfSeq + 1, Number.MAX_SAFE_INTEGER);
    const n = range
      ? (this.stmt.patchesSince.get(...range, objectId, kfSeq) as { n: number }).n
      : 0;
    return { object: JSON.parse(text), seq: kfSeq, chainLen: n, keyframeBytes: text.length };
  }

  /** Rebuilds an object's version at or before seq; the seq returned is the row it came from. */
  versionAt(objectId: number, seq: number): { seq: number; object: unknown } {
    const row = this.latestRow(objectId, seq);
    if (!row) throw new Error(`object ${objectId}: no version at or before ${seq}`);
    return { seq: row.seq, object: this.objectOfRow(objectId, row) };
  }

  /** The object stored in one of an object's rows, as a fresh value the caller may mutate. */
  objectOfRow(objectId: number, row: BodyRow, prefetched?: Map<number, BodyRow>): unknown {
    if (!row.body) throw new Error(`record ${row.seq} has no stored object`);
    const enc = row.flags & ENC_MASK;
    if (enc === ENC_KEYFRAME) return JSON.parse(this.keyframeJson(row));
    if (enc !== ENC_PATCH) throw new Error(`record ${row.seq}: unknown encoding ${enc}`);
    if (row.flags & ENC_STAR) {
      if (row.base === null) throw new Error(`record ${row.seq}: patch without a keyframe`);
      const pre = prefetched?.get(row.base);
      const text = pre?.body
        ? keyframeText(pre.flags, pre.body)
        : this.keyframeJsonAt(objectId, row.base);
      return applyPatchBody(JSON.parse(text), row.flags, row.body, row.rv);
    }
    return this.legacyChainAt(objectId, row.seq);
  }

  /**
   * Keyframe rows by seq, read in ascending order with one statement per chunk: a bulk read of
   * thousands of objects then walks the file forward instead of seeking once per object.
   */
  keyframeRows(seqs: readonly number[]): Map<number, BodyRow> {
    const sorted = [...new Set(seqs)].sort((a, b) => a - b);
    const out = new Map<number, BodyRow>();
    for (let i = 0; i < sorted.length; i += KEYFRAME_CHUNK) {
      const chunk = sorted.slice(i, i + KEYFRAME_CHUNK);
      const rows = this.prep(
        `SELECT seq, flags, body, base, rv FROM records WHERE seq IN (${chunk.map(() => "?").join(",")}) ORDER BY seq`,
      ).all(...chunk) as BodyRow[];
      for (const r of rows) if ((r.flags & ENC_MASK) === ENC_KEYFRAME) out.set(r.seq, r);
    }
    return out;
  }

  /** The JSON text of one of an object's keyframes, by its seq. */
  keyframeJsonAt(objectId: number, seq: number): string {
    const hit = this.keyframeTexts.get(seq);
    if (hit !== undefined) return hit;
    const kf = this.stmt.bodyAt.get(seq) as BodyRow | undefined;
    if (!kf?.body || (kf.flags & ENC_MASK) !== ENC_KEYFRAME)
      throw new Error(`object ${objectId}: keyframe ${seq} is missing`);
    return this.keyframeJson(kf);
  }

  /** Keyframe JSON of a keyframe row; keyframes never change once written, so their text is cached. */
  keyframeJson(row: BodyRow): string {
    const hit = this.keyframeTexts.get(row.seq);
    if (hit !== undefined) return hit;
    const text = keyframeText(row.flags, row.body!);
    this.keyframeTexts.set(row.seq, text);
    return text;
  }

  /** Pre-v4 rows: walk back through every patch to the keyframe, then forward again. */
  private legacyChainAt(objectId: number, seq: number): unknown {
    const links: { enc: number; body: Buffer }[] = [];
    this.buckets.newest(seq, b => {
      for (const r of this.stmt.chain.all(b, objectId, seq) as {
        seq: number;
        flags: number;
        body: Buffer;
      }[]) {
        links.push({ enc: r.flags, body: r.body });
        if ((r.flags & ENC_MASK) === ENC_KEYFRAME) return true;
      }
      return undefined;
    });
    links.reverse();
    if (links.length === 0 || (links[0].enc & ENC_MASK) !== ENC_KEYFRAME) {
      throw new Error(`object ${objectId}: no keyframe at or before record ${seq}`);
    }
    let object: unknown = JSON.parse(keyframeText(links[0].enc, links[0].body));
    for (let i = 1; i < links.length; i++)
      object = applyPatchBody(object, links[i].enc, links[i].body);
    return object;
  }
}
