// The recorder side of bench/scale.ts: `krply record` (the shipped CLI bundle) in its own process,
// what its journal says while it runs (each stream's checkpoint RV, which are live), and start-up on a
// journal of a million records.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { eventRecord, streamIdOf, type JournalRecord } from "../src/event";
import { JournalError, openJournal, openJournalView } from "../src/journal";
import { tempJournalPath } from "../test/support/journal-fixtures";
import { sleep, verdict, type Row } from "./lib-proc";

/** Starts `krply record` with `extra` flags on `store`; node flags (--cpu-prof, --trace-gc) first. */
export function record(
  runner: string,
  kubeconfig: string,
  store: string,
  extra: string[],
  nodeFlags: string[] = [],
): ChildProcess {
  const child = spawn(
    process.execPath,
    [...nodeFlags, runner, "record", "--kubeconfig", kubeconfig, ...extra, "--store", store],
    {
      // stdout carries only what node flags print (--trace-gc); `krply record` writes to stderr.
      stdio: ["ignore", nodeFlags.length > 0 ? "pipe" : "ignore", "pipe"],
      env: { ...process.env, KRPLY_LOG_LEVEL: "warn" },
    },
  );
  child.stderr!.on("data", (d: Buffer) => {
    const s = String(d);
    if (!s.startsWith("streams ") && !s.startsWith("recording ")) process.stderr.write(s);
  });
  return child;
}

/** The checkpoint RV of each stream (by resource) and whether every one has its baseline. */
export function journalState(store: string): {
  rv: [number, number];
  live: number;
  streams: number;
} {
  // A stream of another cluster (the start-up journal's old history) is not part of this run.
  if (!existsSync(store)) return { rv: [0, 0], live: 0, streams: 0 };
  let v: ReturnType<typeof openJournalView>;
  try {
    v = openJournalView(store);
  } catch (err) {
    // The recorder has created the file but not yet its schema: nothing recorded yet.
    if (err instanceof JournalError && err.code === "READONLY")
      return { rv: [0, 0], live: 0, streams: 0 };
    throw err;
  }
  try {
    const rv: [number, number] = [0, 0];
    let live = 0;
    const streams = v.streams();
    for (const s of streams) {
      const k = s.key.resource === "configmaps" ? 0 : 1;
      rv[k] = Math.max(rv[k], Number(s.lastResourceVersion ?? 0));
      if (s.baselinePresent) live++;
    }
    return { rv, live, streams: streams.length };
  } finally {
    v.close();
  }
}

/** Writes n small ConfigMap records into a fresh journal, as a long-running recorder would have. */
function bigJournal(path: string, n: number): void {
  const j = openJournal(path, { sync: "NORMAL" });
  const stream = {
    clusterId: "old",
    group: "",
    version: "v1",
    resource: "configmaps",
    namespace: "",
    selector: "",
  };
  const sid = streamIdOf(stream);
  for (let base = 0; base < n; base += 5000) {
    const records: JournalRecord[] = [];
    for (let i = base; i < Math.min(n, base + 5000); i++) {
      records.push(
        eventRecord({
          stream,
          watchType: "MODIFIED",
          object: {
            apiVersion: "v1",
            kind: "ConfigMap",
            metadata: {
              name: `cm-${i % 20_000}`,
              namespace: `ns-${i % 50}`,
              uid: `u-${i % 20_000}`,
              resourceVersion: String(i + 1),
            },
            data: { v: String(i), app: "settings" },
          },
          observedAt: new Date(Date.UTC(2026, 0, 1) + i * 10).toISOString(),
        }),
      );
    }
    const last = records[records.length - 1];
    j.append({
      records,
      checkpoints: [
        {
          streamId: sid,
          resourceVersion: last.resource!.resourceVersion,
          observedAt: last.observedAt,
        },
      ],
    });
  }
  j.close();
}

/** Start-up on a journal of n records: open time, and `krply record` to its first live stream. */
export async function startupOnBigJournal(
  runner: string,
  kubeconfig: string,
  startupRecords: number,
  row: Row,
): Promise<void> {
  const big = tempJournalPath("krply-bench-scale-big-");
  try {
    const tb = Date.now();
    bigJournal(big.path, startupRecords);
    console.log(`  wrote ${startupRecords} records in ${((Date.now() - tb) / 1000).toFixed(0)} s`);
    const to = Date.now();
    const opened = openJournal(big.path, { check: "tail" });
    const openMs = Date.now() - to;
    opened.close();
    row(`journal open, ${startupRecords} records`, `${openMs} ms`, "tail check + dedup window");
    const ts = Date.now();
    const rc = record(runner, kubeconfig, big.path, ["-r", "configmaps", "-n", "scale-0"]);
    for (;;) {
      if (rc.exitCode !== null) throw new Error("krply record exited on the big journal");
      if (journalState(big.path).live >= 1) break; // the new stream has its baseline
      if (Date.now() - ts > 120_000) throw new Error("no stream live on the big journal");
      await sleep(100);
    }
    const liveS = (Date.now() - ts) / 1000;
    row(
      `start to first stream live, ${startupRecords}-record journal`,
      `${liveS.toFixed(1)} s`,
      verdict(liveS < 5, "< 5 s"),
    );
    rc.kill("SIGINT");
    await new Promise(r => rc.once("exit", r));
  } finally {
    big.cleanup();
  }
}
