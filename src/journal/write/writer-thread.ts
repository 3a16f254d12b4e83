import { existsSync } from "node:fs";
import { join } from "node:path";
import { MessageChannel, receiveMessageOnPort, Worker } from "node:worker_threads";
import { nativeBindingInUse } from "../store/connection";
import { JournalError, type SyncMode } from "../types";
import {
  EXITED,
  FAILED,
  READY,
  STARTING,
  type WriterPragma,
  type WriterReply,
  type WriterRequest,
  type WriterWorkerData,
} from "./writer-worker";

/** Why a submitted transaction did not commit: SQLite's code (SQLITE_FULL, ...) or one of ours. */
export class WriterThreadError extends Error {
  constructor(
    message: string,
    /**
     * SQLITE_*: SQLite refused it; OTHER_WRITER: the file moved since it was planned; LEASED: the
     * recorder lost its lease; CONFLICT: a control row's event id was already stored; ABORTED: an
     * earlier transaction of its generation failed, so it never ran; INVALID: a setting the thread
     * does not change; IO: the thread is gone; CLOSED: submitted after close().
     */
    readonly code: string,
  ) {
    super(message);
    this.name = "WriterThreadError";
  }
}

export interface WriterThreadOptions {
  path: string;
  sync?: SyncMode;
  pageCacheKiB?: number;
  busyTimeoutMs?: number;
  /** The worker script; defaults to writer-worker.js beside the bundle (writer-worker.ts under tsx or jest). */
  script?: string;
  /** better-sqlite3's addon; defaults to the one this process uses (useNativeBinding). */
  nativeBinding?: string;
  /** How long start() waits for the thread to open the file (default 30 s). */
  startTimeoutMs?: number;
  /** Settings the journal gives its writer beyond the defaults (see WRITER_PRAGMAS). */
  pragmas?: Partial<Record<WriterPragma, number>>;
}

/** The worker script: the bundle ships writer-worker.js; sources run through tsx. */
export function defaultWriterScript(): string {
  return join(__dirname, __filename.endsWith(".ts") ? "writer-worker.ts" : "writer-worker.js");
}

// Runs first in the thread: whatever stops the script from loading or opening the file (a missing
// script, a broken addon, an unreadable journal) is reported to start(), which is blocked waiting,
// and the state slot says when the thread has ended, which the event loop cannot while blocked.
const BOOTSTRAP = `
const { workerData } = require("node:worker_threads");
const signal = new Int32Array(workerData.writer.signal);
process.on("exit", () => { Atomics.store(signal, 1, ${EXITED}); Atomics.notify(signal, 0); Atomics.notify(signal, 1); });
try {
  require(workerData.script);
} catch (err) {
  workerData.startup.postMessage(String(err && err.message || err));
  Atomics.store(signal, 1, ${FAILED});
  Atomics.notify(signal, 1);
  process.exit(1);
}
workerData.startup.close();
`;

interface Waiter {
  resolve(): void;
  reject(err: Error): void;
}

/**
 * The main thread's side of the writer thread: submits packed transactions, which it runs in
 * order, one SQLite transaction each, and settles each submit when its transaction has finished.
 */
export class WriterThread {
  private readonly waiting = new Map<number, Waiter>();
  private nextId = 1;
  /** Transactions and settings posted (int32, wraps like the thread's count of those it finished). */
  private posted = 0;
  private gone: WriterThreadError | null = null;
  private closing: Promise<void> | null = null;

  private constructor(
    private readonly worker: Worker,
    private readonly signal: Int32Array,
  ) {
    worker.on("message", (r: WriterReply) => this.settle(r));
    // Without a listener an error in the thread would be thrown in this one.
    worker.on("error", err =>
      this.fail(new WriterThreadError(`the journal's writer thread failed: ${err.message}`, "IO")),
    );
    worker.on("exit", code =>
      this.fail(
        this.closing
          ? new WriterThreadError("the journal's writer thread is closed", "CLOSED")
          : new WriterThreadError(`the journal's writer thread exited (code ${code})`, "IO"),
      ),
    );
    // An idle thread never keeps the process alive (an owner that forgets close() still exits); one
    // with transactions in flight does, like any pending I/O, until they finish (see post()).
    // After the listeners: adding a "message" listener refs the worker's port again.
    worker.unref();
  }

  /** Starts the thread and waits (blocking) until it has opened the file; throws JournalError IO when it cannot. */
  static start(opts: WriterThreadOptions): WriterThread {
    const script = opts.script ?? defaultWriterScript();
    if (!existsSync(script))
      throw new JournalError(`the journal's writer thread script ${script} is missing`, "IO");
    const signal = new Int32Array(new SharedArrayBuffer(8));
    const writer: WriterWorkerData = {
      path: opts.path,
      sync: opts.sync,
      pageCacheKiB: opts.pageCacheKiB,
      busyTimeoutMs: opts.busyTimeoutMs,
      nativeBinding: opts.nativeBinding ?? nativeBindingInUse(),
      pragmas: opts.pragmas,
      signal: signal.buffer as SharedArrayBuffer,
    };
    const { port1, port2 } = new MessageChannel();
    let worker: Worker;
    try {
      worker = new Worker(BOOTSTRAP, {
        eval: true,
        workerData: { script, writer, startup: port2 },
        transferList: [port2],
        execArgv: script.endsWith(".ts") ? ["--require", require.resolve("tsx/cjs")] : [],
      });
    } catch (err) {
      port1.close();
      throw new JournalError(`cannot start the journal's writer thread: ${String(err)}`, "IO", {
        cause: err,
      });
    }
    Atomics.wait(signal, 1, STARTING, opts.startTimeoutMs ?? 30_000);
    const state = Atomics.load(signal, 1);
    if (state !== READY) {
      const why = receiveMessageOnPort(port1)?.message as string | undefined;
      port1.close();
      worker.on("error", () => undefined);
      void worker.terminate();
      throw new JournalError(
        `cannot start the journal's writer thread: ${why ?? (state === STARTING ? "it did not open the journal in time" : "it exited")}`,
        "IO",
      );
    }
    port1.close();
    return new WriterThread(worker, signal);
  }

  /** Transactions (and settings) submitted whose promise has not settled yet. */
  get inFlight(): number {
    return this.waiting.size;
  }

  /**
   * Runs a packed transaction (transferring `data`) after every one submitted before it. `gen` is
   * the planner's generation: once a transaction fails, the later ones of its generation and older
   * are aborted (ABORTED) without touching the file, since they were planned on top of it.
   */
  submit(gen: number, data: ArrayBuffer): Promise<void> {
    return this.post(id => ({ type: "txn", gen, id, data }), [data]);
  }

  /**
   * Changes a setting of the thread's connection after the transactions submitted before it (the
   * byte budget's cap after a full disk, a resized page cache); rejects with INVALID or SQLite's code.
   */
  pragma(name: WriterPragma, value: number): Promise<void> {
    return this.post(id => ({ type: "pragma", id, name, value }));
  }

  /**
   * Blocks until the thread has finished every transaction submitted so far (or has ended); throws
   * JournalError BUSY after timeoutMs. The promises settle later, on the event loop, as usual.
   */
  drainSync(timeoutMs: number): void {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const done = Atomics.load(this.signal, 0);
      if (((this.posted - done) | 0) <= 0 || this.gone || Atomics.load(this.signal, 1) === EXITED)
        return;
      const left = deadline - Date.now();
      if (left <= 0)
        throw new JournalError(
          `the journal's writer thread did not finish its transactions within ${timeoutMs} ms`,
          "BUSY",
        );
      Atomics.wait(this.signal, 0, done, left);
    }
  }

  /** Lets the thread finish what was submitted, then ends it. Safe to call more than once. */
  close(): Promise<void> {
    if (!this.closing) {
      this.closing = new Promise<void>(resolve => {
        if (this.gone) return resolve();
        this.worker.once("exit", () => resolve());
        this.worker.postMessage({ type: "close" } satisfies WriterRequest);
      });
    }
    return this.closing;
  }

  private post(msg: (id: number) => WriterRequest, transfer: ArrayBuffer[] = []): Promise<void> {
    if (this.closing)
      return Promise.reject(
        new WriterThreadError("the journal's writer thread is closed", "CLOSED"),
      );
    if (this.gone) return Promise.reject(this.gone);
    const id = this.nextId++;
    return new Promise<void>((resolve, reject) => {
      this.worker.postMessage(msg(id), transfer);
      this.posted = (this.posted + 1) | 0;
      if (this.waiting.size === 0) this.worker.ref();
      this.waiting.set(id, { resolve, reject });
    });
  }

  private settle(r: WriterReply): void {
    const w = this.waiting.get(r.id);
    if (!w) return;
    this.waiting.delete(r.id);
    if (this.waiting.size === 0) this.worker.unref();
    if (r.error) w.reject(new WriterThreadError(r.error.message, r.error.code));
    else if (r.aborted)
      w.reject(
        new WriterThreadError(
          "an earlier transaction of this generation failed; this one was not run",
          "ABORTED",
        ),
      );
    else w.resolve();
  }

  /** Ends the thread's service: everything pending and everything submitted later fails with err. */
  private fail(err: WriterThreadError): void {
    this.gone ??= err;
    const pending = [...this.waiting.values()];
    this.waiting.clear();
    for (const w of pending) w.reject(this.gone);
  }
}
