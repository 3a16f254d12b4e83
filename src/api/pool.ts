import { join } from "node:path";
import { Worker, type ResourceLimits } from "node:worker_threads";
import type { Logger } from "../log/logger";
import { ApiError, fromWire, type WireError } from "./errors";

/** What every pool worker starts with. */
export interface WorkerData {
  journalPath: string;
  busyTimeoutMs: number;
  /** better-sqlite3's addon the parent loads (KRPLY_SQLITE_BINDING); undefined: the package's own. */
  nativeBinding?: string;
  /**
   * "background": the lane of heavy queries (snapshots, diff, search, export). Its thread runs at a
   * low CPU priority, so on a small machine it takes the cores only when interactive queries leave
   * them idle; and it is the one lane that appends (the sidecar's single writer).
   */
  lane?: "interactive" | "background";
  /** Whether queries here may append (a snapshot record): the background lane, or every worker without one. */
  writes?: boolean;
  /** The view's mapped bytes and page cache (JournalViewOptions); every view is its own. */
  mmapBytes?: number;
  pageCacheKiB?: number;
}

export type WorkerRequest =
  | {
      type: "query";
      id: number;
      name: string;
      input: unknown;
      now: number;
      /** Answer with the value as JSON text (see QueryPool.run). */
      text?: boolean;
    }
  | { type: "close" };

export type WorkerReply =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: WireError };

type Startup = { type: "ready" } | { type: "failed"; error: WireError };

/** Hooks for the sidecar's metrics. */
export interface PoolObserver {
  queued(depth: number): void;
  timedOut(name: string): void;
  replaced(): void;
}

export interface PoolOptions {
  size: number;
  /** Default limit of one query, from when it is queued to its answer. */
  timeoutMs: number;
  /** Queries waiting beyond this many are refused at once with 503. */
  maxQueue: number;
  data: WorkerData;
  log: Logger;
  observer?: PoolObserver;
  /** The worker script; defaults to worker.js beside the bundle (worker.ts under tsx or jest). */
  script?: string;
  /** V8 heap limits of each worker (see YOUNG_GENERATION_MB). */
  resourceLimits?: ResourceLimits;
}

/**
 * A worker's young generation, in MiB. V8's default (three 16 MiB semi-spaces) lets each isolate
 * hold up to 48 MiB of short-lived garbage resident; a query's garbage (decoded versions, diffs) is
 * dead by its answer, so small semi-spaces cost a few more scavenges and keep the sidecar's memory
 * within its budget.
 */
export const YOUNG_GENERATION_MB = 12;
/** The background lane's young generation, in MiB: it collects after every query anyway. */
export const BACKGROUND_YOUNG_GENERATION_MB = 4;

interface Task {
  id: number;
  name: string;
  input: unknown;
  text: boolean;
  timeoutMs: number;
  resolve(v: unknown): void;
  reject(e: Error): void;
  timer: NodeJS.Timeout | null;
  slot: Slot | null;
}

interface Slot {
  worker: Worker;
  task: Task | null;
  /** Set once the worker has started; cleared when it is being replaced. */
  up: boolean;
  /** Set when it is being stopped after a cancelled query; the exit handler replaces it. */
  retiring: boolean;
  exited: boolean;
  ready: Promise<void>;
}

/** The worker script and the flags it needs: the bundle ships worker.js; sources run through tsx. */
export function defaultWorkerScript(): string {
  return join(__dirname, __filename.endsWith(".ts") ? "worker.ts" : "worker.js");
}

const execArgvFor = (script: string): string[] =>
  script.endsWith(".ts") ? ["--require", require.resolve("tsx/cjs")] : [];

/**
 * A small pool of worker threads, each with its own read-only journal view, so a long query never
 * blocks the event loop. A query past its limit is cancelled the only way a synchronous SQLite call
 * can be: its worker is terminated and replaced, and the caller gets a 503.
 */
export class QueryPool {
  private readonly slots: Slot[] = [];
  private readonly queue: Task[] = [];
  private nextId = 1;
  private closing = false;
  private readonly script: string;
  private readonly execArgv: string[];

  constructor(private readonly opts: PoolOptions) {
    this.script = opts.script ?? defaultWorkerScript();
    this.execArgv = execArgvFor(this.script);
    for (let i = 0; i < opts.size; i++) this.slots.push(this.spawn());
  }

  /** Resolves once every worker has opened its view; rejects when one cannot. */
  async ready(): Promise<void> {
    await Promise.all(this.slots.map(s => s.ready));
  }

  /** Queries waiting for a worker. */
  get depth(): number {
    return this.queue.length;
  }

  get busy(): number {
    return this.slots.filter(s => s.task !== null).length;
  }

  private spawn(): Slot {
    const worker = new Worker(this.script, {
      workerData: this.opts.data,
      execArgv: this.execArgv,
      resourceLimits: this.opts.resourceLimits ?? { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB },
    });
    worker.unref();
    const slot: Slot = {
      worker,
      task: null,
      up: false,
      retiring: false,
      exited: false,
      ready: Promise.resolve(),
    };
    slot.ready = new Promise<void>((resolve, reject) => {
      const onStart = (m: Startup | WorkerReply) => {
        if ("type" in m && m.type === "ready") {
          worker.off("message", onStart);
          worker.on("message", (r: WorkerReply) => this.settle(slot, r));
          slot.up = true;
          resolve();
          this.pump();
        } else if ("type" in m && m.type === "failed") {
          // It stays in service and retries opening on each query: the journal may appear later.
          worker.off("message", onStart);
          worker.on("message", (r: WorkerReply) => this.settle(slot, r));
          slot.up = true;
          reject(fromWire(m.error));
          this.pump();
        }
      };
      worker.on("message", onStart);
      worker.once("error", err => reject(err));
    });
    // A rejected start is reported through ready(); keep it from being an unhandled rejection.
    slot.ready.catch(() => undefined);
    worker.on("error", err => {
      this.opts.log.error({ err }, "query worker failed");
      this.fail(slot, new ApiError("internal", "the query worker failed"));
    });
    worker.on("exit", () => {
      slot.exited = true;
      if (slot.task) this.fail(slot, new ApiError("internal", "the query worker exited"));
      const i = this.slots.indexOf(slot);
      // A worker that never started is not respawned: the same start would fail again.
      if (i >= 0 && !this.closing && (slot.up || slot.retiring)) {
        this.slots[i] = this.spawn();
        this.opts.observer?.replaced();
      }
    });
    return slot;
  }

  /**
   * Runs a query in a worker; rejects with a 503 ApiError past its time limit. With `text` the
   * worker answers with the value as JSON in UTF-8 bytes (a Uint8Array): they cross threads as one
   * copy, where an object graph is cloned field by field and then serialized again on the event loop.
   */
  run(
    name: string,
    input: unknown,
    timeoutMs = this.opts.timeoutMs,
    text = false,
  ): Promise<unknown> {
    if (this.closing)
      return Promise.reject(new ApiError("unavailable", "the server is shutting down"));
    if (this.queue.length >= this.opts.maxQueue) {
      return Promise.reject(
        new ApiError(
          "unavailable",
          `too many queries waiting (${this.queue.length}); retry shortly`,
        ),
      );
    }
    return new Promise((resolve, reject) => {
      const task: Task = {
        id: this.nextId++,
        name,
        input,
        text,
        timeoutMs,
        resolve,
        reject,
        timer: null,
        slot: null,
      };
      task.timer = setTimeout(() => this.expire(task), timeoutMs);
      this.queue.push(task);
      this.opts.observer?.queued(this.queue.length);
      this.pump();
    });
  }

  private pump(): void {
    for (const slot of this.slots) {
      if (this.queue.length === 0) return;
      if (slot.task) continue;
      // A slot whose worker has not said ready yet gets work once it does (pump runs again then).
      if (!slot.up) continue;
      const task = this.queue.shift()!;
      this.opts.observer?.queued(this.queue.length);
      slot.task = task;
      task.slot = slot;
      const req: WorkerRequest = {
        type: "query",
        id: task.id,
        name: task.name,
        input: task.input,
        now: Date.now(),
        ...(task.text ? { text: true } : {}),
      };
      slot.worker.postMessage(req);
    }
  }

  private settle(slot: Slot, reply: WorkerReply): void {
    const task = slot.task;
    if (!task || task.id !== reply.id) return;
    slot.task = null;
    if (task.timer) clearTimeout(task.timer);
    if (reply.ok) task.resolve(reply.value);
    else task.reject(fromWire(reply.error));
    this.pump();
  }

  private fail(slot: Slot, err: Error): void {
    const task = slot.task;
    if (!task) return;
    slot.task = null;
    if (task.timer) clearTimeout(task.timer);
    task.reject(err);
  }

  private expire(task: Task): void {
    task.timer = null;
    this.opts.observer?.timedOut(task.name);
    const err = new ApiError(
      "timeout",
      `the query took longer than its limit of ${task.timeoutMs} ms and was cancelled; narrow it (a namespace, a shorter range) or retry`,
    );
    const queued = this.queue.indexOf(task);
    if (queued >= 0) {
      this.queue.splice(queued, 1);
      task.reject(err);
      return;
    }
    const slot = task.slot;
    if (!slot || slot.task !== task) return;
    slot.task = null;
    slot.up = false;
    slot.retiring = true;
    task.reject(err);
    this.opts.log.warn(
      { query: task.name, timeoutMs: task.timeoutMs },
      "query timed out; replacing its worker",
    );
    // Terminating the thread interrupts SQLite mid-call; the exit handler spawns the replacement.
    void slot.worker.terminate();
  }

  /** Lets running and queued queries finish, then closes every worker's view and stops it. */
  async close(): Promise<void> {
    this.closing = true;
    while (this.queue.length > 0 || this.slots.some(s => s.task)) {
      await new Promise(r => setTimeout(r, 10));
    }
    await Promise.all(
      this.slots
        .filter(s => !s.exited)
        .map(
          s =>
            new Promise<void>(resolve => {
              // Held until it leaves, so the process waits for every view to close.
              s.worker.ref();
              s.worker.once("exit", () => resolve());
              s.worker.postMessage({ type: "close" } satisfies WorkerRequest);
              // A worker that does not leave on its own within a second is stopped.
              setTimeout(() => void s.worker.terminate(), 1000).unref();
            }),
        ),
    );
  }
}
