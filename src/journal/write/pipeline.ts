// Pipelined appends: this thread plans batch N+1 (diff, encode, identities) while the writer thread
// commits batch N on its own connection. Plans are made in call order on top of the batches still in
// flight, and the thread commits in that order. When one fails, the thread refuses the rest of its
// generation (ABORTED), so nothing commits on top of a failed batch; once all have answered, the
// writer's state is reloaded from the file and the batches after the failed one are planned again,
// in their order, before any new one. Callers see what a synchronous append would show them: each
// batch commits once or fails with the journal's error.
import type { AppendBatch, AppendResult } from "../types";
import { appendInTxn, type WriterState } from "./append";
import type { PackedWrites } from "./packed-writes";

/** The plan of one batch: its result and what applies to the writer once it commits. */
export type Plan = ReturnType<typeof appendInTxn>;

/** The transport that runs packed batches (writer-thread.ts). */
export interface BatchRunner {
  submit(gen: number, data: ArrayBuffer): Promise<void>;
}

/** What the journal does around the pipeline. */
export interface PipelineHost {
  readonly w: WriterState;
  readonly packed: PackedWrites;
  /** Throws when no batch may be planned now (a lost recorder lease); may add ops to the batch. */
  beforePlan(): void;
  /** Plan-time effects: later plans build on the batch (cache, positions, dedup, next seq). */
  planned(plan: Plan): void;
  /** The batch is durable: keep its keyframe bodies, note the change, run retention when due. */
  committed(plan: Plan): void;
  /** Blocks until every submitted batch has finished (their promises settle later, as usual). */
  quiesce(): void;
  /** Forgets everything planned on top of the file and reloads the writer's state from it. */
  resetFromDisk(): void;
  /** On a full disk: prunes to make room; false when nothing can be pruned. */
  makeRoom(): boolean;
  /** The journal's error for a failure, with context. */
  errorOf(err: unknown): Error & { code?: string };
}

interface Entry {
  batch: AppendBatch;
  resolve: (r: AppendResult) => void;
  reject: (e: Error) => void;
  gen: number;
  plan: Plan | null;
  /** A full disk was pruned for this batch once already. */
  retried: boolean;
}

/** Orders plans, submissions, commits and the recovery after a failure. */
export class AppendPipeline {
  private gen = 1;
  private readonly waiting: Entry[] = [];
  private inFlight: Entry[] = [];
  private replan: Entry[] = [];
  private failure: { entry: Entry; err: unknown } | null = null;
  private recovering = false;

  constructor(
    private readonly host: PipelineHost,
    private readonly runner: BatchRunner,
  ) {}

  /** Batches submitted and not yet answered. */
  get busy(): number {
    return this.inFlight.length;
  }

  append(batch: AppendBatch): Promise<AppendResult> {
    return new Promise<AppendResult>((resolve, reject) => {
      this.waiting.push({ batch, resolve, reject, gen: 0, plan: null, retried: false });
      this.pump();
    });
  }

  private pump(): void {
    while (!this.recovering && this.waiting.length > 0) {
      const e = this.waiting.shift()!;
      try {
        this.submit(e);
      } catch (err) {
        // The plan changed the writer's state part way (identities, the id filter). The batches
        // before it are sound: let them finish, then reload the state from the file at once, so
        // whatever the caller writes next (it may isolate the bad record with plain appends) builds
        // on the file rather than on the abandoned plan.
        this.host.packed.abandon();
        this.host.quiesce();
        this.host.resetFromDisk();
        e.reject(this.host.errorOf(err));
      }
    }
  }

  private submit(e: Entry): void {
    const { w, packed } = this.host;
    this.host.beforePlan();
    packed.begin(w.nextSeq - 1);
    w.store.registry.rows = packed;
    let plan: Plan;
    try {
      plan = appendInTxn(w, packed, e.batch);
    } finally {
      w.store.registry.rows = null;
    }
    const data = packed.finish();
    this.host.planned(plan);
    e.plan = plan;
    e.gen = this.gen;
    this.inFlight.push(e);
    this.runner.submit(e.gen, data).then(
      () => this.onCommit(e),
      (err: unknown) => this.onFail(e, err),
    );
  }

  private onCommit(e: Entry): void {
    // The thread answers in submission order, so the batch that committed is the oldest in flight.
    this.inFlight.shift();
    this.host.packed.committed();
    this.host.committed(e.plan!);
    e.resolve(e.plan!.result);
    if (this.recovering && this.inFlight.length === 0) this.finishRecovery();
  }

  private onFail(e: Entry, err: unknown): void {
    this.inFlight = this.inFlight.filter(x => x !== e);
    // Only the first failure of a recovery decides; any other batch is planned again after it (and
    // fails on its own if the cause stays, as when the thread is gone).
    if ((err as { code?: string }).code === "ABORTED" || this.failure) this.replan.push(e);
    else this.recover(e, err);
    if (this.recovering && this.inFlight.length === 0) this.finishRecovery();
  }

  /** Starts a recovery; it finishes once every batch in flight has answered. */
  private recover(entry: Entry, err: unknown): void {
    this.failure ??= { entry, err };
    if (this.recovering) return;
    this.recovering = true;
    if (this.inFlight.length === 0) this.finishRecovery();
  }

  private finishRecovery(): void {
    this.gen++;
    this.host.resetFromDisk();
    const failed = this.failure?.entry ?? null;
    const err = this.failure?.err;
    this.failure = null;
    const again: Entry[] = [];
    if (failed) {
      const e = this.host.errorOf(err);
      if (e.code === "OTHER_WRITER") again.push(failed);
      else if (e.code === "DISK_FULL" && !failed.retried && this.host.makeRoom()) {
        failed.retried = true;
        again.push(failed);
      } else failed.reject(e);
    }
    this.waiting.unshift(...again, ...this.replan);
    this.replan = [];
    this.recovering = false;
    this.pump();
  }
}
