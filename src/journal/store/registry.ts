import type Database from "better-sqlite3";
import type { StreamKey } from "../../event";
import { parseStreamId } from "../../event";
import { LruCache } from "./cache";
import { IdentityIds } from "./identity-ids";
import type { Statements } from "./statements";

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

/** An object identity id, and whether this call registered it (so it has no versions yet). */
export interface IdentityHit {
  id: number;
  created: boolean;
}

/**
 * Where new identity rows go while the writer's transaction runs on the writer thread: it gives each
 * row its id (the thread inserts it with that id), since this connection cannot insert meanwhile.
 */
export interface IdentityRows {
  stream(
    streamId: string,
    clusterId: string,
    grp: string,
    version: string,
    resource: string,
    namespace: string,
    selector: string,
  ): number;
  object(clusterId: string, kind: string, namespace: string, name: string, grp: string): number;
}

/** The registry of streams and object identities over one connection. */
export class Registry {
  /** Set while a planned transaction's rows go elsewhere (see IdentityRows); null inserts here. */
  rows: IdentityRows | null = null;
  readonly streams = new Map<number, StreamRow>();
  readonly streamsById = new Map<string, StreamRow>();
  private readonly objectIds = new IdentityIds(50_000);
  private readonly objectRows = new LruCache<number, ObjectRow>(50_000);
  private readonly stmt;
  private topStream: number | null = -1;

  constructor(
    db: Database.Database,
    private readonly sql: Statements,
  ) {
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
    };
    this.reloadStreams();
  }

  /**
   * Brings the stream maps up to date for a read. The fields kept (ids, cluster, version) never
   * change once a stream row exists, so only a new stream calls for a reload.
   */
  refreshStreams(): void {
    const top = this.sql.prep("SELECT max(id) FROM streams").pluck().get() as number | null;
    if (top === this.topStream) return;
    this.reloadStreams();
  }

  /** Re-reads the stream registry (after a rolled-back transaction or another writer's append). */
  reloadStreams(): void {
    this.streams.clear();
    this.streamsById.clear();
    const rows = this.sql.prep("SELECT id, stream_id, cluster_id, version FROM streams").all() as {
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

  /**
   * The stream row of a stored record's stream column. A reader's maps can miss a stream another
   * connection added after its last refresh (the writer commits the stream row with, or before, its
   * first record), so a miss re-reads the registry once; a reference still dangling is corruption.
   */
  streamOf(id: number, seq: number): StreamRow {
    const s = this.knownStream(id);
    if (!s) throw new Error(`record ${seq} points at unknown stream ${id}`);
    return s;
  }

  /** The stream row with this id, re-reading the registry once when the maps do not hold it. */
  knownStream(id: number): StreamRow | undefined {
    const s = this.streams.get(id);
    if (s) return s;
    this.refreshStreams();
    return this.streams.get(id);
  }

  /** Returns the stream row for an id, registering it (inside the caller's transaction) if new. */
  ensureStream(streamId: string, clusterId: string): StreamRow {
    const known = this.streamsById.get(streamId);
    if (known) return known;
    if (streamId === "*") {
      const id = this.insertStream("*", "*", "", "", "", "", "");
      return this.remember(id, "*", "*", "");
    }
    const k = parseStreamId(streamId);
    if (k.clusterId !== clusterId) {
      throw new Error(`record clusterId "${clusterId}" does not match its stream "${streamId}"`);
    }
    const id = this.insertStream(
      streamId,
      k.clusterId,
      k.group,
      k.version,
      k.resource,
      k.namespace,
      k.selector,
    );
    return this.remember(id, streamId, k.clusterId, k.version);
  }

  private insertStream(...cols: Parameters<IdentityRows["stream"]>): number {
    if (this.rows) return this.rows.stream(...cols);
    return Number(this.stmt.insertStream.run(...cols).lastInsertRowid);
  }

  /** Finds an object identity id, or null when it is not registered. */
  findObject(
    clusterId: string,
    group: string,
    kind: string,
    namespace: string,
    name: string,
  ): number | null {
    const hit = this.objectIds.get(clusterId, group, kind, namespace, name);
    if (hit !== undefined) return hit;
    const row = this.stmt.findObject.get(clusterId, kind, namespace, name, group) as
      | { id: number }
      | undefined;
    if (row === undefined) return null;
    this.objectIds.set(clusterId, group, kind, namespace, name, row.id);
    return row.id;
  }

  /** Finds an object identity, registering it (inside the caller's transaction) when it is new. */
  registerObject(
    clusterId: string,
    group: string,
    kind: string,
    namespace: string,
    name: string,
  ): IdentityHit {
    const found = this.findObject(clusterId, group, kind, namespace, name);
    if (found !== null) return { id: found, created: false };
    const id = this.rows
      ? this.rows.object(clusterId, kind, namespace, name, group)
      : Number(this.stmt.insertObject.run(clusterId, kind, namespace, name, group).lastInsertRowid);
    this.objectIds.set(clusterId, group, kind, namespace, name, id);
    return { id, created: true };
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

  /** Identities findObject has mapped to their ids, and how many it keeps at most. */
  identityCache(): { cached: number; capacity: number } {
    return { cached: this.objectIds.size, capacity: this.objectIds.capacity };
  }

  /** Sets how many identities findObject keeps mapped to their ids (IdentityIds' capacity). */
  setIdentityCacheSize(entries: number): void {
    this.objectIds.capacity = Math.max(1, Math.floor(entries));
  }

  /** Forgets cached object ids, since a rolled-back transaction may have created some. */
  forgetObjects(): void {
    this.objectIds.clear();
    this.objectRows.clear();
  }
}
