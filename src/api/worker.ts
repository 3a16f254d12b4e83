// A pool worker: one read-only view of its own, answering one query at a time by name.
import { parentPort, workerData } from "node:worker_threads";
import { openJournalView, useNativeBinding, type Journal, type JournalView } from "../journal";
import { logger } from "../log/logger";
import { toWire } from "./errors";
import type { WorkerData, WorkerReply, WorkerRequest } from "./pool";
import { openSnapshotWriter, runQuery, type QueryName } from "./queries";

const data = workerData as WorkerData;
useNativeBinding(data.nativeBinding);
const log = logger("api-worker");
const port = parentPort!;
let view: JournalView | null = null;
let writer: Journal | null = null;

function openView(): JournalView {
  view ??= openJournalView(data.journalPath, { busyTimeoutMs: data.busyTimeoutMs });
  return view;
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
      writer: () => (writer ??= openSnapshotWriter(data.journalPath, data.busyTimeoutMs)),
    });
    reply = { id: msg.id, ok: true, value };
  } catch (err) {
    reply = { id: msg.id, ok: false, error: toWire(err) };
    // Only the caller-safe message crosses to the main thread, so the cause is logged here.
    if (reply.error.code === "internal") log.error({ err, query: msg.name }, "query failed");
  }
  port.postMessage(reply);
});

// Opening the view up front makes a bad journal path fail at start, not on the first query.
try {
  openView();
  port.postMessage({ type: "ready" });
} catch (err) {
  port.postMessage({ type: "failed", error: toWire(err) });
}
