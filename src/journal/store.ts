import type Database from "better-sqlite3";
import { parseStreamId } from "../event/stream-id";
import type { StreamKey } from "../event/schema";
import { LruCache } from "./cache";
import { applyPatchBody, ENC_KEYFRAME, ENC_MASK, keyframeText } from "./codec";

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
}

class NoVersionError extends Error {}

/** Shared registry of streams and object identities over one connection. */
export class Store {
  readonly streams = new Map<number, StreamRow>();
  readonly streamsById = new Map<string, StreamRow>();
  /** Whether the last objectId() call created the identity (so it has no versions yet). */
  lastCreated = false;
  private readonly objectIds = new LruCache<string, number>(50_000);
  private readonly objectRows = new LruCache<number, ObjectRow>(50_000);
  private readonly stmt;

  constructor(readonly db: Database.Database) {
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
      chain: db.prepare(
        "SELECT seq, flags, body FROM records WHERE object=? AND seq<=? AND body IS NOT NULL ORDER BY seq DESC",
      ),
    };
    this.reloadStreams();
  }

  private readonly statements = new Map<string, Database.Statement>();

  /** A prepared statement for sql, compiled once per connection (readers build few distinct shapes). */
  prep(sql: string): Database.Statement {
    let st = this.statements.get(sql);
    if (!st) {
      st = this.db.prepare(sql);
      this.statements.set(sql, st);
    }
    return st;
  }

  /** Re-reads the stream registry (after a rolled-back transaction or for a reader). */
  reloadStreams(): void {
    this.streams.clear();
    this.streamsById.clear();
    const rows = this.db
      .prepare("SELECT id, stream_id, cluster_id, version FROM streams")
      .all() as {
      id: number;
      stream_id: string;
      cluster_id: string;
      version: string;
    }[];
    for (const r of rows) this.remember(r.id, r.stream_id, r.cluster_id, r.version);
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
    const key = `${clusterId}\u0000${group}\u0000${kind}\u0000${namespace}\u0000${name}`;
    const hit = this.objectIds.get(key);
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
    this.objectIds.set(key, id);
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

  /** Forgets cached object ids, since a rolled-back transaction may have created some. */
  forgetObjects(): void {
    this.objectIds.clear();
    this.objectRows.clear();
  }

  /** The newest stored version of an object, rebuilt from disk; null when it has none. */
  lastVersion(objectId: number): ({ seq: number } & ReturnType<Store["versionAt"]>) | null {
    try {
      // One walk down the chain from the newest row, instead of a max() query and then the walk.
      return this.versionAt(objectId, Number.MAX_SAFE_INTEGER);
    } catch (err) {
      if (err instanceof NoVersionError) return null;
      throw err;
    }
  }

  /** Rebuilds an object's version at seq from its keyframe and patches; also reports the chain length. */
  versionAt(
    objectId: number,
    seq: number,
  ): { seq: number; object: unknown; chainLen: number; keyframeBytes: number } {
    const links: { enc: number; body: Buffer }[] = [];
    let newest = 0;
    for (const r of this.stmt.chain.iterate(objectId, seq) as Iterable<{
      seq: number;
      flags: number;
      body: Buffer;
    }>) {
      if (newest === 0) newest = r.seq;
      links.push({ enc: r.flags, body: r.body });
      if ((r.flags & ENC_MASK) === ENC_KEYFRAME) break;
    }
    if (links.length === 0)
      throw new NoVersionError(`object ${objectId}: no version at or before ${seq}`);
    links.reverse();
    if (links.length === 0 || (links[0].enc & ENC_MASK) !== ENC_KEYFRAME) {
      throw new Error(`object ${objectId}: no keyframe at or before record ${seq}`);
    }
    const head = keyframeText(links[0].enc, links[0].body);
    let object: unknown = JSON.parse(head);
    for (let i = 1; i < links.length; i++)
      object = applyPatchBody(object, links[i].enc, links[i].body);
    // The keyframe's serialised size is the yardstick for later patches.
    return { seq: newest, object, chainLen: links.length - 1, keyframeBytes: head.length };
  }
}
