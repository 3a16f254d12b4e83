import { Worker } from "node:worker_threads";
import Database from "better-sqlite3";
import { baselineRecords, eventRecord, streamIdOf } from "../../event";
import {
  at,
  configMap,
  deployment,
  streamKey,
  tempJournalPath,
} from "../../../test/support/journal-fixtures";
import { openJournal, openJournalView } from "../index";
import { SCHEMA_VERSION } from "../store/schema";
import { JournalError, type Journal, type JournalView } from "../types";

const deploys = streamKey("deployments", "apps", "v1", "shop");
const cms = streamKey("configmaps", "", "v1", "shop");
const web = { id: 0, kind: "Deployment", group: "apps", namespace: "shop", name: "web" };

function added(name: string, rv: number) {
  return eventRecord({
    stream: deploys,
    watchType: "ADDED",
    object: deployment(name, "shop", `u-${name}`, rv, 3),
    observedAt: at(rv),
  });
}

describe("openJournalView", () => {
  let tmp: ReturnType<typeof tempJournalPath>;
  let writer: Journal;
  let view: JournalView;
  beforeEach(() => {
    tmp = tempJournalPath();
    writer = openJournal(tmp.path);
    writer.append({ records: [added("web", 1)], checkpoints: [] });
    view = openJournalView(tmp.path);
  });
  afterEach(() => {
    view.close();
    writer.close();
    tmp.cleanup();
  });

  it("stays correct while the writer appends: new streams, baselines and disappearances show up", () => {
    const identity = { ...web, id: view.objects("test")[0].id };
    expect(view.positionAt(identity, Date.parse(at(50)))?.exists).toBe(true);
    expect(view.baselineMarks(streamIdOf(deploys))).toEqual([]);
    // A relist that does not list web: from then on web is gone, and the view must see it.
    writer.append({
      records: [
        ...baselineRecords({
          stream: deploys,
          listResourceVersion: "40",
          listedAt: at(40),
          objects: [deployment("api", "shop", "u-api", 39, 3)],
          kind: "Deployment",
        }),
        eventRecord({
          stream: cms,
          watchType: "ADDED",
          object: configMap("c", "shop", "u-c", 41, {}),
          observedAt: at(41),
        }),
      ],
      checkpoints: [],
    });
    expect(view.baselineMarks(streamIdOf(deploys))).toHaveLength(1);
    expect(view.positionAt(identity, Date.parse(at(50)))).toMatchObject({
      exists: false,
      absence: { reason: "vanished-in-gap", atMs: Date.parse(at(40)) },
    });
    expect(view.streams().map(s => s.streamId)).toEqual([streamIdOf(deploys), streamIdOf(cms)]);
    expect(view.kinds("test")).toEqual(["ConfigMap", "Deployment"]);
  });

  it("lists streams from one snapshot when a writer adds a stream between its two reads", () => {
    // The registry reload and the stream rows are two statements. A writer that commits a new
    // stream between them once left a row without a registry entry, and listing threw as if the
    // journal were damaged (seen with `krply coverage` beside a live recorder).
    const registry = (view as unknown as { store: { registry: { reloadStreams(): void } } }).store
      .registry;
    const reload = registry.reloadStreams.bind(registry);
    let raced = false;
    registry.reloadStreams = () => {
      reload();
      if (raced) return;
      raced = true;
      writer.append({
        records: [
          eventRecord({
            stream: cms,
            watchType: "ADDED",
            object: configMap("c", "shop", "u-c", 41, {}),
            observedAt: at(41),
          }),
        ],
        checkpoints: [{ streamId: streamIdOf(cms), resourceVersion: "41", observedAt: at(41) }],
      });
    };
    expect(view.streams().map(s => s.streamId)).toEqual([streamIdOf(deploys)]);
    expect(raced).toBe(true);
    expect(view.streams().map(s => s.streamId)).toEqual([streamIdOf(deploys), streamIdOf(cms)]);
  });

  it("the writer's own view drops its caches on its own commits", () => {
    const identity = { ...web, id: writer.objects("test")[0].id };
    expect(writer.baselineMarks(streamIdOf(deploys))).toEqual([]);
    writer.append({
      records: baselineRecords({
        stream: deploys,
        listResourceVersion: "40",
        listedAt: at(40),
        objects: [],
        kind: "Deployment",
      }),
      checkpoints: [],
    });
    expect(writer.baselineMarks(streamIdOf(deploys))).toHaveLength(1);
    expect(writer.positionAt(identity, Date.parse(at(50)))?.exists).toBe(false);
  });

  it("is read-only: it has no append, and its connection cannot write", () => {
    expect("append" in view).toBe(false);
    expect(view.recordCount()).toBe(1);
    expect(view.sizeBytes()).toBeGreaterThan(0);
  });

  it("refuses a missing file, a newer schema and an unmigrated older one, with typed errors", () => {
    expect(() => openJournalView(`${tmp.path}-missing`)).toThrow(
      expect.objectContaining({ code: "NOT_FOUND" }),
    );
    view.close();
    writer.close();
    const raw = new Database(tmp.path);
    raw.pragma("user_version = 99");
    raw.close();
    expect(() => openJournalView(tmp.path)).toThrow(
      expect.objectContaining({ code: "SCHEMA_NEWER" }),
    );
    const old = new Database(tmp.path);
    old.pragma("user_version = 1");
    old.close();
    expect(() => openJournalView(tmp.path)).toThrow(expect.objectContaining({ code: "READONLY" }));
    // The writer migrates; views reopen fine afterwards. (user_version 1 over a v8 schema is a
    // test fixture only, so put the real version back instead of migrating.)
    const fix = new Database(tmp.path);
    fix.pragma(`user_version = ${SCHEMA_VERSION}`);
    fix.close();
    writer = openJournal(tmp.path);
    view = openJournalView(tmp.path);
    expect(view.recordCount()).toBe(1);
  });

  it("refuses reads once closed", () => {
    view.close();
    expect(() => view.streams()).toThrow(JournalError);
    expect(() => view.streams()).toThrow(/closed/);
    view = openJournalView(tmp.path);
  });
});

/**
 * Holds an exclusive lock on the file from a worker thread for holdMs, so the main thread meets a
 * busy file the way a view meets a writer in the middle of a checkpoint or a migration.
 */
async function holdLock(path: string, holdMs: number): Promise<Worker> {
  const worker = new Worker(
    `const { workerData, parentPort } = require("node:worker_threads");
     const Database = require(workerData.module);
     const db = new Database(workerData.path);
     db.pragma("locking_mode = EXCLUSIVE");
     db.exec("BEGIN EXCLUSIVE; UPDATE meta SET value = value WHERE key = 'redact_salt'; COMMIT");
     parentPort.postMessage("locked");
     Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, workerData.holdMs);
     db.close();`,
    { eval: true, workerData: { path, holdMs, module: require.resolve("better-sqlite3") } },
  );
  await new Promise<void>((resolve, reject) => {
    worker.once("message", () => resolve());
    worker.once("error", reject);
  });
  return worker;
}

describe("openJournalView on a busy file", () => {
  it("waits for the lock up to busyTimeoutMs, and says the file is busy when it runs out", async () => {
    const tmp = tempJournalPath();
    try {
      const j = openJournal(tmp.path);
      j.append({ records: [added("web", 1)], checkpoints: [] });
      j.close();
      const impatient = await holdLock(tmp.path, 1000);
      expect(() => openJournalView(tmp.path, { busyTimeoutMs: 1 })).toThrow(
        expect.objectContaining({ code: "BUSY", message: expect.stringMatching(/locked/) }),
      );
      await impatient.terminate();
      // Held for less than the default timeout: the view waits, then opens and reads.
      const patient = await holdLock(tmp.path, 300);
      const view = openJournalView(tmp.path);
      expect(view.recordCount()).toBe(1);
      view.close();
      await patient.terminate();
    } finally {
      tmp.cleanup();
    }
  });
});

describe("openJournal check", () => {
  it("refuses a journal whose delta chain is corrupt when asked for a full check", () => {
    const tmp = tempJournalPath();
    try {
      const j = openJournal(tmp.path, { keyframeEvery: 4 });
      j.append({ records: [1, 2, 3].map(rv => added("web", rv)), checkpoints: [] });
      j.close();
      const raw = new Database(tmp.path);
      // A patch whose bytes no longer decode: the file is sound, the journal is not.
      raw.prepare("UPDATE records SET body = x'00ff00' WHERE seq = 2").run();
      raw.close();
      expect(() => openJournal(tmp.path, { check: "full" })).toThrow(
        expect.objectContaining({ code: "CORRUPT" }),
      );
      // quick_check only sees SQLite's own structure, which is intact.
      openJournal(tmp.path, { check: "quick" }).close();
      openJournal(tmp.path).close();
    } finally {
      tmp.cleanup();
    }
  });
});
