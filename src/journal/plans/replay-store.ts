import type Database from "better-sqlite3";
import { toJournalError } from "../errors";
import { connect } from "../store/connection";
import { JournalError } from "../types";

/** A stored replay plan; the journal keeps the body as the planner made it and does not read it. */
export interface StoredPlan {
  id: string;
  createdAt: string;
  digest: string;
  sourceCluster: string;
  targetCluster: string;
  body: unknown;
}

/** One stored dry run or apply run of a plan. */
export interface StoredRun {
  planId: string;
  /** A dry run's digest, or an apply run's id. */
  key: string;
  at: string;
  ok: boolean;
  body: unknown;
}

/**
 * Replay plans and their runs in the journal file. It writes only its own tables, so it can sit
 * beside the recorder's single writer (SQLite serializes the commits) without touching records.
 */
export interface ReplayStore {
  savePlan(plan: StoredPlan): void;
  plan(id: string): StoredPlan | null;
  /** Plans, newest first, without bodies' order guarantees beyond created_at. */
  plans(limit?: number): StoredPlan[];
  saveDryRun(planId: string, digest: string, at: string, ok: boolean, body: unknown): void;
  /** The newest dry run of a plan, or null. */
  latestDryRun(planId: string): StoredRun | null;
  saveApplyRun(runId: string, planId: string, at: string, ok: boolean, body: unknown): void;
  applyRuns(planId: string): StoredRun[];
  close(): void;
}

interface PlanRow {
  id: string;
  created_at: string;
  digest: string;
  source_cluster: string;
  target_cluster: string;
  body: string;
}

const planOf = (r: PlanRow): StoredPlan => ({
  id: r.id,
  createdAt: r.created_at,
  digest: r.digest,
  sourceCluster: r.source_cluster,
  targetCluster: r.target_cluster,
  body: JSON.parse(r.body),
});

class SqliteReplayStore implements ReplayStore {
  constructor(
    private readonly path: string,
    private readonly db: Database.Database,
  ) {}

  private run<T>(what: string, body: () => T): T {
    if (!this.db.open) throw new JournalError(`replay store ${this.path} is closed`, "CLOSED");
    try {
      return body();
    } catch (err) {
      throw toJournalError(err, what);
    }
  }

  savePlan(p: StoredPlan): void {
    this.run(`save plan ${p.id}`, () => {
      const existing = this.db.prepare("SELECT digest FROM replay_plans WHERE id=?").get(p.id) as
        | { digest: string }
        | undefined;
      // A plan id names one content forever: the gate and approvals refer to it.
      if (existing && existing.digest !== p.digest)
        throw new JournalError(`plan ${p.id} is already stored with another digest`, "INVALID");
      if (existing) return;
      this.db
        .prepare(
          "INSERT INTO replay_plans (id, created_at, digest, source_cluster, target_cluster, body) VALUES (?,?,?,?,?,?)",
        )
        .run(p.id, p.createdAt, p.digest, p.sourceCluster, p.targetCluster, JSON.stringify(p.body));
    });
  }

  plan(id: string): StoredPlan | null {
    return this.run(`read plan ${id}`, () => {
      const r = this.db.prepare("SELECT * FROM replay_plans WHERE id=?").get(id) as
        | PlanRow
        | undefined;
      return r ? planOf(r) : null;
    });
  }

  plans(limit = 100): StoredPlan[] {
    return this.run("list plans", () =>
      (
        this.db
          .prepare("SELECT * FROM replay_plans ORDER BY created_at DESC, id LIMIT ?")
          .all(limit) as PlanRow[]
      ).map(planOf),
    );
  }

  saveDryRun(planId: string, digest: string, at: string, ok: boolean, body: unknown): void {
    this.run(`save dry run of ${planId}`, () => {
      this.db
        .prepare("INSERT INTO replay_dry_runs (plan_id, digest, at, ok, body) VALUES (?,?,?,?,?)")
        .run(planId, digest, at, ok ? 1 : 0, JSON.stringify(body));
    });
  }

  latestDryRun(planId: string): StoredRun | null {
    return this.run(`read dry run of ${planId}`, () => {
      const r = this.db
        .prepare(
          "SELECT plan_id, digest, at, ok, body FROM replay_dry_runs WHERE plan_id=? ORDER BY seq DESC LIMIT 1",
        )
        .get(planId) as
        | { plan_id: string; digest: string; at: string; ok: number; body: string }
        | undefined;
      return r
        ? { planId: r.plan_id, key: r.digest, at: r.at, ok: r.ok === 1, body: JSON.parse(r.body) }
        : null;
    });
  }

  saveApplyRun(runId: string, planId: string, at: string, ok: boolean, body: unknown): void {
    this.run(`save apply run of ${planId}`, () => {
      this.db
        .prepare("INSERT INTO replay_runs (run_id, plan_id, at, ok, body) VALUES (?,?,?,?,?)")
        .run(runId, planId, at, ok ? 1 : 0, JSON.stringify(body));
    });
  }

  applyRuns(planId: string): StoredRun[] {
    return this.run(`read apply runs of ${planId}`, () =>
      (
        this.db
          .prepare(
            "SELECT run_id, plan_id, at, ok, body FROM replay_runs WHERE plan_id=? ORDER BY at, run_id",
          )
          .all(planId) as {
          run_id: string;
          plan_id: string;
          at: string;
          ok: number;
          body: string;
        }[]
      ).map(r => ({
        planId: r.plan_id,
        key: r.run_id,
        at: r.at,
        ok: r.ok === 1,
        body: JSON.parse(r.body),
      })),
    );
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}

/**
 * Opens the replay tables of a journal file (creating and migrating the file unless readonly). A
 * read-only store serves the sidecar's and the CLI's reads.
 */
export function openReplayStore(
  path: string,
  options: { readonly?: boolean; busyTimeoutMs?: number; nativeBinding?: string } = {},
): ReplayStore {
  const db = connect(path, {
    readonly: options.readonly ?? false,
    busyTimeoutMs: options.busyTimeoutMs,
    nativeBinding: options.nativeBinding,
  });
  return new SqliteReplayStore(path, db);
}
