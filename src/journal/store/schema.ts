import type Database from "better-sqlite3";
import { JournalError } from "../types";

/** Record type and watch type codes as stored; append-only lists, never reorder. */
export const TYPE_CODES = [
  "event",
  "baseline",
  "gap",
  "coverage_change",
  "audit_correlation",
  "snapshot",
  "checkpoint",
  "pruned",
] as const;
/** The type code of audit correlation rows, which have their own index and dedup (schema v10). */
export const AUDIT_CODE = TYPE_CODES.indexOf("audit_correlation");
export const WATCH_CODES = ["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"] as const;

/**
 * The object index is keyed by (bucket, object) where a bucket is a run of 2^13 consecutive seqs
 * (2^15 in schema v5 and v6). Queries must spell the bucket exactly as the index does, so they
 * interpolate OBJECT_BUCKET.
 */
export const OBJECT_BUCKET_SHIFT = 13;
export const OBJECT_BUCKET = `seq >> ${OBJECT_BUCKET_SHIFT}`;
/**
 * Names the buckets ?lo..?hi as rows of b(k), so one statement probes every bucket in C. Join it
 * as `b CROSS JOIN records r ON r.${OBJECT_BUCKET}=b.k AND ...`: CROSS JOIN keeps b as the outer loop,
 * which the planner would otherwise not choose for a table it has no statistics about.
 */
export const BUCKETS_CTE =
  "WITH RECURSIVE b(k) AS (SELECT ? UNION ALL SELECT k + 1 FROM b WHERE k < ?)";

// Each entry upgrades the schema by one version; user_version records how many have run.
const MIGRATIONS: string[] = [
  `
  CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
  CREATE TABLE streams (
    id INTEGER PRIMARY KEY,
    stream_id TEXT NOT NULL UNIQUE,
    cluster_id TEXT NOT NULL,
    grp TEXT NOT NULL,
    version TEXT NOT NULL,
    resource TEXT NOT NULL,
    namespace TEXT NOT NULL,
    selector TEXT NOT NULL,
    last_rv TEXT,
    last_observed_at TEXT,
    last_baseline_seq INTEGER,
    state TEXT NOT NULL DEFAULT 'active'
  );
  CREATE TABLE objects (
    id INTEGER PRIMARY KEY,
    cluster_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    namespace TEXT NOT NULL,
    name TEXT NOT NULL,
    grp TEXT NOT NULL,
    UNIQUE (cluster_id, kind, namespace, name, grp)
  );
  -- One row per record. Fields that can be derived (resource, clusterId, uid) are not repeated;
  -- flags carry small booleans and the body encoding; body holds a keyframe or an RFC 6902 patch.
  CREATE TABLE records (
    seq INTEGER PRIMARY KEY,
    event_id ANY NOT NULL,
    type INTEGER NOT NULL,
    stream INTEGER NOT NULL REFERENCES streams(id),
    object INTEGER REFERENCES objects(id),
    observed_at INTEGER NOT NULL,
    watch INTEGER,
    rv TEXT,
    flags INTEGER NOT NULL,
    hash ANY,
    meta TEXT,
    body BLOB
  );
  CREATE UNIQUE INDEX records_event_id ON records(event_id);
  CREATE INDEX records_object ON records(object, seq) WHERE object IS NOT NULL;
  CREATE INDEX records_stream_rv ON records(stream, rv) WHERE rv IS NOT NULL;
  CREATE INDEX records_control ON records(type, stream, seq) WHERE object IS NULL;
  `,
  // v2: a (stream, rv) index over every row costs a random B-tree insert per event; object RVs are
  // found through the object index, so only control rows (checkpoints, baseline markers) keep one.
  `
  DROP INDEX records_stream_rv;
  CREATE INDEX records_control_rv ON records(stream, rv) WHERE object IS NULL AND rv IS NOT NULL;
  `,
  // v3: a unique index over random 16-byte ids dirties about one page per row at every commit.
  // Object records are deduplicated through an in-memory filter and their own rows (dedup.ts);
  // only rows without an object (gaps, checkpoints, markers, ...) keep a unique index.
  `
  DROP INDEX records_event_id;
  CREATE UNIQUE INDEX records_control_id ON records(event_id) WHERE object IS NULL;
  `,
  // v4: patches are stored against their keyframe (base), not the previous version, so any version
  // is one keyframe plus one patch away. The object index drops its explicit seq: seq is the rowid,
  // which every index entry carries anyway, so (object) sorts the same and each entry is smaller.
  `
  ALTER TABLE records ADD COLUMN base INTEGER;
  DROP INDEX records_object;
  CREATE INDEX records_object ON records(object) WHERE object IS NOT NULL;
  `,
  // v5: an index on (object) takes every append at a random place, so a batch dirties up to one
  // index page per record and the WAL written per commit grows with the journal. Keyed by (seq
  // bucket, object), new entries all land in the newest bucket's few pages; reads probe an
  // object's rows bucket by bucket (buckets.ts, BUCKETS_CTE).
  `
  DROP INDEX records_object;
  CREATE INDEX records_object ON records(seq >> 15, object) WHERE object IS NOT NULL;
  `,
  // v6: the earliest observation time of any object row in each bucket. A look-up "as of T" skips
  // every bucket whose earliest row is later than T instead of probing it. The minimum only ever
  // stays at or below the rows still stored (pruning removes rows, never lowers a time), so a
  // skipped bucket can never hold the answer.
  `
  CREATE TABLE bucket_times (k INTEGER PRIMARY KEY, min_observed INTEGER NOT NULL);
  INSERT INTO bucket_times (k, min_observed)
    SELECT seq >> 15, min(observed_at) FROM records WHERE object IS NOT NULL GROUP BY 1;
  `,
  // v7: buckets of 2^13 rows instead of 2^15. A batch's index entries land at random places in the
  // newest bucket, so each commit rewrites most of that bucket's leaf pages, which are most of
  // what it writes to the WAL. A quarter of the bucket is a quarter of those pages. Reads probe
  // four times as many buckets, all in one statement.
  `
  DROP INDEX records_object;
  CREATE INDEX records_object ON records(${OBJECT_BUCKET}, object) WHERE object IS NOT NULL;
  DELETE FROM bucket_times;
  INSERT INTO bucket_times (k, min_observed)
    SELECT ${OBJECT_BUCKET}, min(observed_at) FROM records WHERE object IS NOT NULL GROUP BY 1;
  `,
  // v8: an index on object names, so an event query by name finds its objects without scanning
  // every identity ever recorded (a busy cluster's pod identities grow without bound). One entry
  // per object, written once when the object is first seen, so appends do not notice it.
  `
  CREATE INDEX IF NOT EXISTS objects_name ON objects(name);
  `,
  // v9: replay plans keep their full body here (the ReplayPlan object in the cluster holds only a
  // summary), with every dry run and apply run of a plan. Nothing here touches records.
  `
  CREATE TABLE IF NOT EXISTS replay_plans (
    id TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    digest TEXT NOT NULL,
    source_cluster TEXT NOT NULL,
    target_cluster TEXT NOT NULL,
    body TEXT NOT NULL
  );
  CREATE TABLE IF NOT EXISTS replay_dry_runs (
    seq INTEGER PRIMARY KEY,
    plan_id TEXT NOT NULL REFERENCES replay_plans(id),
    digest TEXT NOT NULL,
    at TEXT NOT NULL,
    ok INTEGER NOT NULL,
    body TEXT NOT NULL
  );
  CREATE INDEX IF NOT EXISTS replay_dry_runs_plan ON replay_dry_runs(plan_id, seq);
  CREATE TABLE IF NOT EXISTS replay_runs (
    run_id TEXT PRIMARY KEY,
    plan_id TEXT NOT NULL REFERENCES replay_plans(id),
    at TEXT NOT NULL,
    ok INTEGER NOT NULL,
    body TEXT NOT NULL
  );
  CREATE INDEX IF NOT EXISTS replay_runs_plan ON replay_runs(plan_id, at);
  `,
  // v10: audit correlations carry the observedAt of the event they describe, so the correlations
  // of an event are one probe by (stream, time). Partial: only audit rows enter it, so appends of
  // events never touch it. Audit rows come as often as events, so like object rows they leave the
  // unique index over random ids (one dirtied page per row per commit); the writer finds their
  // copies through records_audit instead (write/append.ts).
  `
  CREATE INDEX IF NOT EXISTS records_audit ON records(stream, observed_at)
    WHERE type = ${AUDIT_CODE} AND object IS NULL;
  DROP INDEX IF EXISTS records_control_id;
  CREATE UNIQUE INDEX records_control_id ON records(event_id)
    WHERE object IS NULL AND type != ${AUDIT_CODE};
  `,
];

/** The schema version this build writes. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/** Brings the file to SCHEMA_VERSION, refusing files written by a newer krply. */
export function migrate(db: Database.Database, readonly: boolean): void {
  const current = db.pragma("user_version", { simple: true }) as number;
  if (current > SCHEMA_VERSION) {
    throw new JournalError(
      `journal schema version ${current} is newer than this krply supports (${SCHEMA_VERSION}); upgrade krply`,
      "SCHEMA_NEWER",
    );
  }
  if (current === SCHEMA_VERSION) return;
  if (readonly) {
    throw new JournalError(
      `journal schema version ${current} needs migration to ${SCHEMA_VERSION}, which a read-only open cannot do`,
      "READONLY",
    );
  }
  // All steps in one transaction: the upgrade is all or nothing, and a new file writes each page of
  // its schema to the WAL once instead of once per step.
  db.transaction(() => {
    // Another process may have upgraded the file while this one waited for the write lock.
    const from = db.pragma("user_version", { simple: true }) as number;
    for (let v = from; v < SCHEMA_VERSION; v++) db.exec(MIGRATIONS[v]);
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
  }).immediate();
}
