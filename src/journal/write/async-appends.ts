// The journal's pipelined appends (pipeline.ts) over the writer thread (writer-thread.ts): what the
// journal keeps in step while batches are planned here and committed there.
import type Database from "better-sqlite3";
import { logger } from "../../log/logger";
import { toJournalError } from "../errors";
import { AUDIT_CODE } from "../store/schema";
import type { Store } from "../store/store";
import { JournalError, type AppendBatch, type AppendResult, type SyncMode } from "../types";
import type { WriterState } from "./append";
import { PackedWrites } from "./packed-writes";
import { AppendPipeline, type Plan, type PipelineHost } from "./pipeline";
import { TxnBuilder } from "./txn-pack";
import type { WriterStatements } from "./txn-writes";
import { WriterThread, WriterThreadError } from "./writer-thread";
import type { WriterPragma } from "./writer-worker";

const log = logger("journal.async");

/** What the journal lends the pipelined appends. */
export interface AsyncJournal {
  readonly db: Database.Database;
  readonly path: string;
  readonly w: WriterState;
  readonly st: WriterStatements;
  readonly store: Store;
  /** Forgets the writer's state beyond the file and reads it again (as after another writer's append). */
  reloadWriterState(): void;
  /** Marks the file changed by this process and runs retention when due (as after a sync append). */
  afterCommit(): void;
  /** On a full disk: prunes to make room; false when the journal has no retention. */
  makeRoom(): boolean;
  /** Per-connection limits of the journal's byte budget, which the thread's connection needs too. */
  writerPragmas(): Partial<Record<WriterPragma, number>>;
  /** Throws LEASED when this process lost the recorder lease; renews it inside the batch when due. */
  leaseCheck(renew: (key: string, instance: string, valueJson: string) => void): void;
}

export interface AsyncOptions {
  sync?: SyncMode;
  pageCacheKiB?: number;
  busyTimeoutMs: number;
  script?: string;
}

/** Pipelined appends of one journal: the writer thread, the packed writes and their pipeline. */
export class AsyncAppends implements PipelineHost {
  readonly packed: PackedWrites;
  private readonly pipeline: AppendPipeline;
  private readonly builder = new TxnBuilder();

  private constructor(
    private readonly j: AsyncJournal,
    private readonly thread: WriterThread,
    private readonly busyTimeoutMs: number,
  ) {
    const controlCopy = j.db.prepare(
      "SELECT 1 FROM records WHERE event_id=? AND object IS NULL AND type != ? LIMIT 1",
    );
    this.packed = new PackedWrites(
      j.st,
      j.store,
      this.builder,
      id => controlCopy.get(id, AUDIT_CODE) !== undefined,
      j.w.codec,
    );
    this.loadIds();
    this.pipeline = new AppendPipeline(this, thread);
  }

  /** Starts the writer thread; throws (a JournalError) when it cannot start. */
  static start(j: AsyncJournal, opts: AsyncOptions): AsyncAppends {
    const thread = WriterThread.start({
      path: j.path,
      sync: opts.sync,
      pageCacheKiB: opts.pageCacheKiB,
      busyTimeoutMs: opts.busyTimeoutMs,
      script: opts.script,
      pragmas: j.writerPragmas(),
    });
    return new AsyncAppends(j, thread, opts.busyTimeoutMs);
  }

  get w(): WriterState {
    return this.j.w;
  }

  append(batch: AppendBatch): Promise<AppendResult> {
    return this.pipeline.append(batch);
  }

  /** Sets the thread's page cache (the journal's own connection got the same). */
  setPageCacheKiB(kib: number): void {
    this.thread
      .pragma("cache_size", -kib)
      .catch((err: unknown) =>
        log.warn({ err, path: this.j.path }, "could not set the writer thread's page cache"),
      );
  }

  /** Blocks until every submitted batch has finished, so a synchronous write finds the file settled. */
  quiesce(): void {
    if (this.pipeline.busy > 0) this.thread.drainSync(this.busyTimeoutMs);
  }

  async close(): Promise<void> {
    this.quiesce();
    await this.thread.close();
  }

  beforePlan(): void {
    this.j.leaseCheck((key, instance, value) => this.builder.leaseRenew(key, instance, value));
  }

  planned(plan: Plan): void {
    const w = this.j.w;
    w.nextSeq = plan.nextSeq;
    w.duplicates += plan.duplicates;
    for (const [id, v] of plan.pending) {
      w.cache.set(id, v);
      w.positions.set(id, v);
    }
    for (const [stream, seq] of plan.resumes) w.ids.checkpointAt(stream, seq);
    // Until it commits, a keyframe of this batch can only be read from here (see baseFromDisk).
    (w.unsaved ??= []).push(plan.pending);
  }

  committed(plan: Plan): void {
    const w = this.j.w;
    // By reference: a prune or a catch-up may have dropped the list since (their reads are fresh).
    const i = w.unsaved?.indexOf(plan.pending) ?? -1;
    if (i >= 0) w.unsaved!.splice(i, 1);
    for (const [id, k] of plan.keyframes) w.bodies.set(id, k.seq, k.flags, k.body);
    this.j.afterCommit();
  }

  resetFromDisk(): void {
    this.j.reloadWriterState();
    this.loadIds();
  }

  makeRoom(): boolean {
    if (!this.j.makeRoom()) return false;
    // A full disk lowers the budget's page cap; the thread must keep to it before the batch runs again.
    for (const [name, value] of Object.entries(this.j.writerPragmas()))
      this.thread
        .pragma(name as WriterPragma, value)
        .catch((err: unknown) =>
          log.warn({ err, path: this.j.path }, "could not set a limit on the writer thread"),
        );
    return true;
  }

  /** Why the thread ended (it failed, or its owner closed it); appends must go back to the main thread. */
  ended: string | null = null;

  errorOf(err: unknown): Error & { code?: string } {
    if (err instanceof WriterThreadError) {
      if (err.code === "IO" || err.code === "CLOSED") this.ended ??= err.message;
      if (err.code === "OTHER_WRITER" || err.code === "ABORTED") return err;
      if (err.code === "LEASED") return new JournalError(err.message, "LEASED");
      if (!err.code.startsWith("SQLITE_"))
        return new JournalError(`append: ${err.message}`, "IO", { cause: err });
    }
    return toJournalError(err, "append");
  }

  private loadIds(): void {
    const max = (table: string) =>
      (this.j.db.prepare(`SELECT max(id) FROM ${table}`).pluck().get() as number | null) ?? 0;
    this.packed.load(max("objects"), max("streams"));
  }
}
