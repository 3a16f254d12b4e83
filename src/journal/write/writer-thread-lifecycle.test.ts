import Database from "better-sqlite3";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import type { Worker } from "node:worker_threads";
import { JournalError } from "../types";
import { TxnBuilder } from "./txn-pack";
import { WriterThread } from "./writer-thread";
import {
  codeOf,
  fileState,
  rowsAfter,
  rowsTxn,
  useJournalFile,
} from "../../../test/support/writer-thread-fixtures";

describe("the journal's writer thread: its life", () => {
  const f = useJournalFile();
  const b = new TxnBuilder();

  it("drainSync returns once the thread has finished every transaction, before the promises settle", async () => {
    const wt = f.start();
    let planned = fileState(f.path);
    const first = planned.lastSeq;
    const submits: Promise<void>[] = [];
    for (let i = 0; i < 5; i++) {
      submits.push(wt.submit(1, rowsTxn(b, planned, 200, 512)));
      planned = { ...planned, lastSeq: planned.lastSeq + 200 };
    }
    const settled: number[] = [];
    submits.forEach((p, i) => void p.then(() => settled.push(i)));
    wt.drainSync(60_000);
    // Still on this turn of the event loop: every row is in the file, no promise has settled.
    expect(rowsAfter(f.path, first)).toHaveLength(1000);
    expect(settled).toEqual([]);
    expect(wt.inFlight).toBe(5);
    await Promise.all(submits);
    expect(wt.inFlight).toBe(0);
    expect(settled).toEqual([0, 1, 2, 3, 4]);
    wt.drainSync(0); // nothing outstanding: returns at once
  });

  it("drainSync gives up with BUSY, and a transaction fails with SQLITE_BUSY, while another connection holds the write lock", async () => {
    const wt = f.start({ busyTimeoutMs: 300 });
    const holder = new Database(f.path);
    holder.prepare("BEGIN IMMEDIATE").run();
    const p = wt.submit(1, rowsTxn(b, fileState(f.path), 1));
    try {
      expect(() => wt.drainSync(50)).toThrow(JournalError);
      expect(await codeOf(p)).toBe("SQLITE_BUSY");
    } finally {
      holder.prepare("ROLLBACK").run();
      holder.close();
    }
  });

  it("close() finishes what was submitted, is safe twice, and later submits fail with CLOSED", async () => {
    const wt = f.start();
    const planned = fileState(f.path);
    const p = wt.submit(1, rowsTxn(b, planned, 10));
    const closed = wt.close();
    await expect(p).resolves.toBeUndefined();
    await closed;
    await wt.close();
    expect(rowsAfter(f.path, planned.lastSeq)).toHaveLength(10);
    expect(await codeOf(wt.submit(2, rowsTxn(b, fileState(f.path), 1)))).toBe("CLOSED");
  });

  it("fails what is pending, and everything later, with IO when the thread dies", async () => {
    const wt = f.start({ busyTimeoutMs: 500 });
    // The thread waits on the lock, so its transaction is surely pending when it is terminated.
    const holder = new Database(f.path);
    holder.prepare("BEGIN IMMEDIATE").run();
    try {
      const p = wt.submit(1, rowsTxn(b, fileState(f.path), 1));
      void (wt as unknown as { worker: Worker }).worker.terminate();
      expect(await codeOf(p)).toBe("IO");
    } finally {
      holder.prepare("ROLLBACK").run();
      holder.close();
    }
    expect(wt.inFlight).toBe(0);
    expect(await codeOf(wt.submit(2, rowsTxn(b, fileState(f.path), 1)))).toBe("IO");
    wt.drainSync(1000); // the thread has ended: nothing to wait for
  });

  it("start() throws JournalError IO when the thread cannot open the journal or its script is missing", () => {
    const fail = (f: () => unknown): JournalError => {
      try {
        f();
      } catch (err) {
        return err as JournalError;
      }
      throw new Error("start() did not throw");
    };
    const missingFile = fail(() => WriterThread.start({ path: join(f.dir, "nope.db") }));
    expect(missingFile).toBeInstanceOf(JournalError);
    expect(missingFile.code).toBe("IO");
    expect(missingFile.message).toMatch(/does not exist/);
    const missingScript = fail(() =>
      WriterThread.start({ path: f.path, script: join(f.dir, "nope.js") }),
    );
    expect(missingScript.code).toBe("IO");
    // A script that loads but never serves (not a writer at all) ends the thread, which start() sees.
    const notWriter = fail(() =>
      WriterThread.start({ path: f.path, script: join(__dirname, "txn-pack.ts") }),
    );
    expect(notWriter.code).toBe("IO");
    expect(notWriter.message).toMatch(/exited/);
  });

  it("answers a failure inside the thread (a buffer that is not a transaction) and serves on", async () => {
    const wt = f.start();
    const bad = wt.submit(1, new ArrayBuffer(64));
    await expect(bad).rejects.toThrow("not a packed transaction");
    expect(await codeOf(bad)).toBe("IO");
    expect(await codeOf(wt.submit(2, rowsTxn(b, fileState(f.path), 2)))).toBe("committed");
  });

  it("keeps the process alive only while transactions are in flight: an owner that forgets close() still exits", () => {
    const planned = fileState(f.path);
    const child = `
      const { WriterThread } = require(${JSON.stringify(join(__dirname, "writer-thread.ts"))});
      const { TxnBuilder } = require(${JSON.stringify(join(__dirname, "txn-pack.ts"))});
      const wt = WriterThread.start({ path: ${JSON.stringify(f.path)} });
      const b = new TxnBuilder();
      b.reset(${JSON.stringify(planned)});
      b.record(${planned.lastSeq + 1}, "from-child", 1, 1, 1, 1, 1, "7", 0, null, null, null, null);
      wt.submit(1, b.finish()).then(() => console.log("committed"), err => console.log(err.code));
      console.log("started");
    `;
    const r = spawnSync(process.execPath, ["--require", require.resolve("tsx/cjs"), "-e", child], {
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(r.stderr).toBe("");
    // It lived until its transaction committed, then ended on its own (not by the timeout).
    expect(r.stdout.trim().split("\n")).toEqual(["started", "committed"]);
    expect(r.signal).toBeNull();
    expect(r.status).toBe(0);
    expect(rowsAfter(f.path, planned.lastSeq).map(row => row.event_id)).toEqual(["from-child"]);
  });
});
