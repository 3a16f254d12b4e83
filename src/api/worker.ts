// A pool worker: one read-only view of its own, answering one query at a time by name.
import { setPriority } from "node:os";
import { getHeapStatistics } from "node:v8";
import { parentPort, workerData } from "node:worker_threads";
import { openJournalView, useNativeBinding, type Journal, type JournalView } from "../journal";
import { logger } from "../log/logger";
import { fullGc } from "../watch/heap-trim";
import { ApiError, toWire } from "./errors";
import type { WorkerData, WorkerReply, WorkerRequest } from "./pool";
import { openSnapshotWriter, runQuery, type QueryName } from "./queries";

const data = workerData as WorkerData;
useNativeBinding(data.nativeBinding);
const log = logger("api-worker");
const port = parentPort!;
const background = data.lane === "background";
let view: JournalView | null = null;
let writer: Journal | null = null;

/**
 * Heap in use past which an interactive worker collects its garbage after answering. A query's
 * garbage (decoded versions, diffs, the answer's text) is dead once it is answered, but V8 lets the
 * old generation grow to over 100 MiB before its first full collection, in each worker.
 */
const TRIM_ABOVE_BYTES = 32 * 2 ** 20;

/** Nice value of the background lane's thread (Linux sets it per thread; 19 is the lowest). */
const BACKGROUND_NICE = 15;

if (background) {
  try {
    // Pid 0 is this thread on Linux: a snapshot then yields its core to history and events pages.
    setPriority(0, BACKGROUND_NICE);
  } catch (err) {
    log.warn({ err }, "cannot lower the background query thread's priority");
  }
}

function openView(): JournalView {
  view ??= openJournalView(data.journalPath, {
    busyTimeoutMs: data.busyTimeoutMs,
    mmapBytes: data.mmapBytes,
    pageCacheKiB: data.pageCacheKiB,
  });
  return view;
}

/** The lane's writer; only the background lane has one, so the sidecar holds a single writer. */
function snapshotWriter(): Journal {
  if (data.writes === false)
    throw new ApiError("internal", "only the background query lane writes");
  writer ??= openSnapshotWriter(data.journalPath, data.busyTimeoutMs);
  return writer;
}

port.on("message", (msg: WorkerRequest) => {
  if (msg.type === "close") {
    view?.close();
    view = null;
    writer?.close();
    writer = null;
    port.close();
    return;
  }
  let reply: WorkerReply;
  try {
    const value = runQuery(openView(), msg.name as QueryName, msg.input as never, {
      journalPath: data.journalPath,
      busyTimeoutMs: data.busyTimeoutMs,
      now: () => msg.now,
      writer: snapshotWriter,
    });
    // As UTF-8 bytes: an answer of 100 KiB or more as a string would sit in the main thread's large
    // object space until a full collection; a buffer's memory leaves with its small wrapper.
    reply = { id: msg.id, ok: true, value: msg.text ? Buffer.from(JSON.stringify(value)) : value };
  } catch (err) {
    reply = { id: msg.id, ok: false, error: toWire(err) };
    // Only the caller-safe message crosses to the main thread, so the cause is logged here.
    if (reply.error.code === "internal") log.error({ err, query: msg.name }, "query failed");
  }
  port.postMessage(reply);
  // The background lane's queries (a snapshot reads every object) leave tens of MiB of garbage each;
  // collected after every one, the next starts from the same heap instead of piling on top of it.
  if (background || getHeapStatistics().used_heap_size > TRIM_ABOVE_BYTES) fullGc()?.();
});

// Opening the view up front makes a bad journal path fail at start, not on the first query.
try {
  openView();
  port.postMessage({ type: "ready" });
} catch (err) {
  port.postMessage({ type: "failed", error: toWire(err) });
}
