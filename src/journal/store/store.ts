import type Database from "better-sqlite3";
import { ObjectBuckets } from "./buckets";
import { Registry } from "./registry";
import { Statements } from "./statements";
import { Versions } from "./versions";

export type { StreamRow, ObjectRow, IdentityHit } from "./registry";
export type { BodyRow } from "./versions";

/** One record row as stored. */
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

/** Everything the readers and the writer share over one connection. */
export class Store {
  readonly sql: Statements;
  readonly registry: Registry;
  /** Finds an object's rows through the bucketed object index. */
  readonly buckets: ObjectBuckets;
  readonly versions: Versions;

  constructor(readonly db: Database.Database) {
    this.sql = new Statements(db);
    this.registry = new Registry(db, this.sql);
    this.buckets = new ObjectBuckets(db, sql => this.sql.prep(sql));
    this.versions = new Versions(db, this.sql, this.buckets);
  }

  /** Forgets everything cached from rows, after a rolled-back transaction or a rewrite. */
  forget(): void {
    this.registry.forgetObjects();
    this.versions.forget();
    this.buckets.forget();
  }
}
