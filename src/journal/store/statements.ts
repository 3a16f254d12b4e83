import type Database from "better-sqlite3";

/** Prepared statements compiled once per connection and shape (readers build few distinct shapes). */
export class Statements {
  private readonly cache = new Map<string, Database.Statement>();

  constructor(private readonly db: Database.Database) {}

  /** A prepared statement for sql that returns rows as objects. */
  prep(sql: string): Database.Statement {
    return this.cached(sql, () => this.db.prepare(sql));
  }

  /** Like prep, but the statement returns rows as arrays (kept apart from prep's object-mode one). */
  prepRaw(sql: string): Database.Statement {
    return this.cached(`raw:${sql}`, () => this.db.prepare(sql).raw(true));
  }

  private cached(key: string, make: () => Database.Statement): Database.Statement {
    let st = this.cache.get(key);
    if (!st) {
      st = make();
      this.cache.set(key, st);
    }
    return st;
  }
}
