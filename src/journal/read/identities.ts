import { BUCKETS_CTE, OBJECT_BUCKET } from "../store/schema";
import type { Store } from "../store/store";
import type { ObjectIdentity } from "../types";

/** A LIKE pattern matching names that start with prefix (LIKE wildcards escaped with a backslash). */
function likePrefix(prefix: string): string {
  return `${prefix.replace(/[\\%_]/g, c => `\\${c}`)}%`;
}

/** Object identities of a cluster, optionally in one namespace. */
export function identities(store: Store, clusterId: string, namespace?: string): ObjectIdentity[] {
  const sql =
    'SELECT id, kind, grp AS "group", namespace, name FROM objects WHERE cluster_id=?' +
    (namespace !== undefined ? " AND namespace=?" : "") +
    " ORDER BY kind, namespace, name";
  const args = namespace !== undefined ? [clusterId, namespace] : [clusterId];
  const rows = store.sql.prep(sql).all(...args) as ObjectIdentity[];
  // Decoding a record looks its identity up again; hand over what this query already read.
  for (const r of rows) store.registry.rememberObject({ ...r, clusterId });
  return rows;
}

/** At most limit object identities of a cluster with ids above afterId, in id order. */
export function identityPage(
  store: Store,
  clusterId: string,
  afterId: number,
  limit: number,
  namespace?: string,
): ObjectIdentity[] {
  // "+cluster_id" keeps the planner on the rowid range: through the identity index it would read
  // every object of the cluster and sort them, for each page.
  const sql =
    'SELECT id, kind, grp AS "group", namespace, name FROM objects WHERE +cluster_id=? AND id>?' +
    (namespace !== undefined ? " AND namespace=?" : "") +
    " ORDER BY id LIMIT ?";
  const args = namespace !== undefined ? [clusterId, afterId, namespace] : [clusterId, afterId];
  // Not remembered in the registry, unlike identities(): a page's positions are never decoded
  // (positionsPage), and a walk over every object left each one's row in the view's cache of 50k,
  // 6 MiB of the sidecar's background thread after snapshots of 10k objects.
  return store.sql.prep(sql).all(...args, limit) as ObjectIdentity[];
}

/** Object identities whose name starts with a prefix, any cluster by default. */
export function findIdentities(
  store: Store,
  namePrefix: string,
  filter: { clusterId?: string; kind?: string },
): (ObjectIdentity & { clusterId: string })[] {
  const where = ["name LIKE ? ESCAPE '\\'"];
  const args: string[] = [likePrefix(namePrefix)];
  if (filter.clusterId !== undefined) {
    where.push("cluster_id=?");
    args.push(filter.clusterId);
  }
  if (filter.kind !== undefined) {
    where.push("kind=?");
    args.push(filter.kind);
  }
  return store.sql
    .prep(
      `SELECT id, cluster_id AS clusterId, kind, grp AS "group", namespace, name FROM objects WHERE ${where.join(" AND ")} ORDER BY cluster_id, kind, namespace, name`,
    )
    .all(...args) as (ObjectIdentity & { clusterId: string })[];
}

/** Kinds recorded in a cluster. */
export function kindsOf(store: Store, clusterId: string): string[] {
  return store.sql
    .prep("SELECT DISTINCT kind FROM objects WHERE cluster_id=? ORDER BY kind")
    .pluck()
    .all(clusterId) as string[];
}

/** Kinds recorded on a stream (a stream holds one resource, so normally one kind). */
export function kindsOfStream(store: Store, streamId: string): string[] {
  const s = store.registry.streamsById.get(streamId);
  if (!s) return [];
  return store.sql
    .prep(
      "SELECT DISTINCT o.kind FROM objects o WHERE o.id IN (SELECT object FROM records WHERE stream=? AND object IS NOT NULL LIMIT 1000)",
    )
    .pluck()
    .all(s.id) as string[];
}

/** Streams that recorded an object identity. */
export function streamsOfObject(store: Store, objectId: number): string[] {
  const range = store.buckets.range(0, Number.MAX_SAFE_INTEGER);
  const rows = range
    ? (store.sql
        .prep(
          `${BUCKETS_CTE} SELECT DISTINCT r.stream FROM b CROSS JOIN records r ON r.${OBJECT_BUCKET}=b.k AND r.object=?`,
        )
        .pluck()
        .all(...range, objectId) as number[])
    : [];
  return [...new Set(rows)].map(id => {
    const s = store.registry.knownStream(id);
    if (!s) throw new Error(`object ${objectId} has records on unknown stream ${id}`);
    return s.streamId;
  });
}
