import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import pino from "pino";
import { json, listOf, cm, startFakeApi, type FakeApi, type Responder } from "../test/fakeapi";
import { tempJournalPath } from "../test/support/journal-fixtures";
import { ConfigError } from "./config";
import { openJournal } from "./journal";
import { KubeClient, loadKubeConfig } from "./kube/client";
import type { Logger } from "./log/logger";
import { listSnapshots, recordSnapshot, snapshot } from "./materialize";
import { createHash } from "node:crypto";
import { readdirSync } from "node:fs";
import { damagedJournalRecords, damagePages, writeJournal } from "../test/support/damaged-journal";
import { processRuntime, Runtime } from "./runtime";

/** A real pino logger whose lines the test reads back. */
function capturedLog(): {
  log: Logger;
  lines: { level: number; msg: string; err?: { message: string } }[];
} {
  const lines: { level: number; msg: string; err?: { message: string } }[] = [];
  const log = pino(
    { level: "debug" },
    { write: (line: string) => void lines.push(JSON.parse(line)) },
  );
  return { log, lines };
}

const ERROR = 50;

// Tests listen on loopback only, on a free port.
const LOOPBACK_METRICS = { KRPLY_METRICS_HOST: "127.0.0.1", KRPLY_METRICS_PORT: "0" };

async function until<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise(r => setTimeout(r, 20));
  }
}

const widgetsCrd = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "widgets.example.com" },
  spec: {
    group: "example.com",
    scope: "Namespaced",
    names: { plural: "widgets", singular: "widget", kind: "Widget" },
    versions: [{ name: "v1", served: true, storage: true }],
  },
  status: { conditions: [{ type: "Established", status: "True" }] },
};

// Discovery and LIST answers by path, so the order in which streams start does not matter.
const answers: Record<string, Responder> = {
  "/api/v1": res =>
    json(res, 200, {
      kind: "APIResourceList",
      groupVersion: "v1",
      resources: [
        {
          name: "configmaps",
          singularName: "configmap",
          namespaced: true,
          kind: "ConfigMap",
          verbs: ["get", "list", "watch"],
          shortNames: ["cm"],
        },
      ],
    }),
  "/apis": res => json(res, 200, { kind: "APIGroupList", groups: [] }),
  "/api/v1/configmaps": listOf(10, [cm("a", 5)]),
  "/apis/example.com/v1/widgets": listOf(11, []),
};
const byPath: Responder = (res, req) => (answers[req.path] ?? (r => json(r, 404, {})))(res, req);

describe("Runtime", () => {
  let fake: FakeApi;
  let client: KubeClient;
  let tmp: ReturnType<typeof tempJournalPath>;
  let runtime: Runtime | undefined;

  beforeEach(async () => {
    fake = await startFakeApi();
    fake.onList(...Array.from({ length: 20 }, () => byPath));
    client = await KubeClient.create(loadKubeConfig({ kubeconfig: fake.kubeconfig }));
    tmp = tempJournalPath("krply-runtime-");
  });

  afterEach(async () => {
    await runtime?.stop();
    runtime = undefined;
    await client.close();
    await fake.close();
    tmp.cleanup();
  });

  it("reads and starts nothing when created; the first use builds one recorder, which later uses reuse", async () => {
    const { log } = capturedLog();
    runtime = new Runtime({
      env: {
        ...LOOPBACK_METRICS,
        PEPR_WATCH_MODE: "true",
        KRPLY_JOURNAL: tmp.path,
        KRPLY_RESOURCES: "configmaps,widgets.example.com",
        KRPLY_MIRROR_EVERY_MS: "20",
      },
      client,
      log,
    });
    expect(fake.requests).toEqual([]);
    expect(existsSync(tmp.path)).toBe(false);

    const mirrored: string[] = [];
    const recorder = runtime.storeReady(value => void mirrored.push(value));
    expect(recorder).not.toBeNull();
    expect(runtime.recorder()).toBe(recorder);
    await until("the configmaps stream watching", () =>
      recorder!.status().some(s => s.key.resource === "configmaps" && s.phase === "watching"),
    );
    // The checkpoint mirror writes into the Store it was given.
    const value = await until("a mirrored watermark", () => mirrored.at(-1));
    expect(Object.values(JSON.parse(value).watermarks)).toEqual(["10"]);

    // A selected CRD that becomes established starts its stream; its deletion stops it.
    await runtime.onCrd(widgetsCrd, "ADDED");
    await until("the widgets stream", () =>
      recorder!.status().some(s => s.key.resource === "widgets" && s.phase === "watching"),
    );
    await runtime.onCrd(widgetsCrd, "DELETED");
    expect(recorder!.status().map(s => s.key.resource)).toEqual(["configmaps"]);
    expect(runtime.recorder()).toBe(recorder);
  }, 30_000);

  it("snapshots through the recorder's journal and logs what it took", async () => {
    const { log, lines } = capturedLog();
    runtime = new Runtime({
      env: {
        ...LOOPBACK_METRICS,
        PEPR_WATCH_MODE: "true",
        KRPLY_JOURNAL: tmp.path,
        KRPLY_RESOURCES: "configmaps",
      },
      client,
      log,
    });
    const recorder = runtime.recorder()!;
    await until("the stream watching", () => recorder.status()[0]?.phase === "watching");
    // The journal held no scheduled snapshot, so the start took a catch-up one.
    const catchUp = await runtime.catchUp;
    expect(catchUp?.ok).toBe(true);
    const run = await runtime.snapshotSchedule().run();
    expect(run.ok || run.error.message).toBe(true);
    const taken = run.ok ? run.result.taken : [];
    expect(taken).toEqual([
      {
        clusterId: recorder.clusterIdentity!.clusterId,
        id: expect.any(String),
        complete: true,
        missing: [],
      },
    ]);
    expect(lines.map(l => l.msg)).toContain("krply scheduled snapshot done");
    await runtime.stop();
    const journal = openJournal(tmp.path);
    try {
      expect(listSnapshots(journal).map(s => s.id)).toEqual([
        catchUp?.ok && catchUp.result.taken[0].id,
        taken[0].id,
      ]);
    } finally {
      journal.close();
    }
  }, 30_000);

  it("logs a run whose journal is not open yet instead of throwing", async () => {
    const { log, lines } = capturedLog();
    const missing = join(tmp.dir, "no-such-dir", "journal.db");
    runtime = new Runtime({
      env: {
        ...LOOPBACK_METRICS,
        PEPR_WATCH_MODE: "true",
        KRPLY_JOURNAL: missing,
        KRPLY_JOURNAL_RETRY_MS: "20",
      },
      client,
      log,
    });
    const recorder = runtime.recorder()!;
    await until("a failed open", () =>
      recorder.metrics.journalOpenFailures.get().then(m => m.values.length > 0),
    );
    const run = await runtime.runScheduledSnapshot();
    expect(run.ok).toBe(false);
    expect(!run.ok && run.error.message).toBe(
      `the journal at ${missing} is not open yet; no snapshot this time`,
    );
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: ERROR,
        msg: "krply scheduled snapshot failed",
        err: expect.objectContaining({ message: expect.stringContaining("is not open yet") }),
      }),
    );
  });

  it("serves the recorder's metrics at /metrics on its own port: every name docs/recorder.md lists", async () => {
    runtime = new Runtime({
      env: {
        ...LOOPBACK_METRICS,
        PEPR_WATCH_MODE: "true",
        KRPLY_JOURNAL: tmp.path,
        KRPLY_RESOURCES: "configmaps",
        KRPLY_RETENTION_BYTES: "64Mi",
      },
      client,
      log: capturedLog().log,
    });
    const recorder = runtime.recorder()!;
    await until("the configmaps stream watching", () =>
      recorder.status().some(s => s.key.resource === "configmaps" && s.phase === "watching"),
    );
    const port = await runtime.metricsPort();
    expect(port).toBeGreaterThan(0);
    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
    const text = await res.text();
    const doc = readFileSync(join(__dirname, "..", "docs", "recorder.md"), "utf8");
    const section = doc.slice(
      doc.indexOf("## Metrics"),
      doc.indexOf("\n## ", doc.indexOf("## Metrics") + 3),
    );
    const documented = [...new Set([...section.matchAll(/`(krply_[a-z_]+)/g)].map(m => m[1]))];
    expect(documented.length).toBeGreaterThanOrEqual(13);
    for (const name of documented) expect(text).toMatch(new RegExp(`^# TYPE ${name} `, "m"));
    // What the recorder did shows up: the baseline of the one ConfigMap.
    expect(text).toMatch(/^krply_events_ingested_total\{[^}]*type="baseline"[^}]*\} [1-9]/m);
    // The dashboard charts journal bytes against the budget the journal resolved.
    expect(text).toMatch(/^krply_journal_budget_bytes 67108864$/m);
    expect((await fetch(`http://127.0.0.1:${port}/other`)).status).toBe(404);
    // The same port answers the watcher's readiness probe from the recorder's health.
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: "ready", state: "running", reasons: [] });
    await runtime.stop();
    runtime = undefined;
    await expect(fetch(`http://127.0.0.1:${port}/metrics`)).rejects.toThrow();
  }, 30_000);

  it("neither records nor snapshots where Pepr does not watch, and touches no journal", async () => {
    const { log, lines } = capturedLog();
    runtime = new Runtime({
      env: {
        KRPLY_JOURNAL: tmp.path,
        KRPLY_SNAPSHOT_AT: "06:00",
        KRPLY_SNAPSHOT_EVERY_HOURS: "12",
      },
      client,
      log,
    });
    expect(runtime.records).toBe(false);
    expect(runtime.recorder()).toBeNull();
    await runtime.onCrd(widgetsCrd, "ADDED");
    const schedule = runtime.snapshotSchedule(new Date("2026-03-01T05:00:00Z"));
    expect(schedule).toMatchObject({
      name: "krply-scheduled-snapshot",
      every: 12,
      unit: "hours",
      startTime: new Date("2026-03-01T06:00:00Z"),
    });
    const run = await schedule.run();
    expect(!run.ok && run.error.message).toMatch(
      /only where krply records \(the watcher controller\)/,
    );
    expect(lines).toContainEqual(
      expect.objectContaining({ level: ERROR, msg: "krply scheduled snapshot failed" }),
    );
    expect(fake.requests).toEqual([]);
    expect(existsSync(tmp.path)).toBe(false);
  });

  it("registers the default schedule on an invalid configuration, and every use reports the error", async () => {
    const { log, lines } = capturedLog();
    runtime = new Runtime({
      env: { PEPR_MODE: "dev", KRPLY_JOURNAL: tmp.path, KRPLY_SNAPSHOT_AT: "25:00" },
      client,
      log,
    });
    expect(runtime.records).toBe(true);
    let schedule: ReturnType<Runtime["snapshotSchedule"]> | undefined;
    expect(
      () => (schedule = runtime!.snapshotSchedule(new Date("2026-03-01T05:00:00Z"))),
    ).not.toThrow();
    expect(schedule).toMatchObject({ every: 24, startTime: new Date("2026-03-02T02:00:00Z") });
    expect(() => runtime!.config()).toThrow(ConfigError);
    expect(() => runtime!.config()).toThrow(
      'KRPLY_SNAPSHOT_AT="25:00" is invalid: must be HH:MM (UTC)',
    );

    // The recorder is not built, and says why once, however often it is asked.
    expect(runtime.recorder()).toBeNull();
    await runtime.onCrd(widgetsCrd, "ADDED");
    const why = lines.filter(l => l.msg === "krply does not record: its configuration is invalid");
    expect(why).toHaveLength(1);
    expect(why[0].err?.message).toBe('KRPLY_SNAPSHOT_AT="25:00" is invalid: must be HH:MM (UTC)');

    const run = await schedule!.run();
    expect(!run.ok && run.error).toBeInstanceOf(ConfigError);
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: ERROR,
        msg: "krply scheduled snapshot failed",
        err: expect.objectContaining({ message: expect.stringContaining("KRPLY_SNAPSHOT_AT") }),
      }),
    );
    expect(fake.requests).toEqual([]);
    expect(existsSync(tmp.path)).toBe(false);
  });
});

describe("Runtime scheduled snapshot after a restart and under load", () => {
  let fake: FakeApi;
  let client: KubeClient;
  let tmp: ReturnType<typeof tempJournalPath>;
  let runtime: Runtime | undefined;
  const HOUR = 3_600_000;

  beforeEach(async () => {
    fake = await startFakeApi();
    fake.onList(...Array.from({ length: 20 }, () => byPath));
    client = await KubeClient.create(loadKubeConfig({ kubeconfig: fake.kubeconfig }));
    tmp = tempJournalPath("krply-runtime-");
  });
  afterEach(async () => {
    await runtime?.stop();
    runtime = undefined;
    await client.close();
    await fake.close();
    tmp.cleanup();
  });

  /** A journal whose newest scheduled snapshot was taken `ageHours` ago. */
  function journalWithSnapshotAged(ageHours: number): string {
    const j = openJournal(tmp.path);
    try {
      const takenAt = new Date(Date.now() - ageHours * HOUR);
      const at = takenAt.toISOString();
      const snap = snapshot(j, "c-old", at, `scheduled-${at.slice(0, 16)}`, {
        withoutObjects: true,
      });
      return recordSnapshot(j, snap.data, takenAt).id!;
    } finally {
      j.close();
    }
  }

  const startRuntime = () => {
    runtime = new Runtime({
      env: {
        PEPR_WATCH_MODE: "true",
        KRPLY_JOURNAL: tmp.path,
        KRPLY_RESOURCES: "configmaps",
        KRPLY_SNAPSHOT_EVERY_HOURS: "24",
      },
      client,
      log: capturedLog().log,
      catchUpWaitMs: 10_000,
    });
    return runtime.recorder()!;
  };

  const snapshotIds = () => {
    const j = openJournal(tmp.path);
    try {
      return listSnapshots(j).map(s => s.id);
    } finally {
      j.close();
    }
  };

  it("takes a catch-up snapshot at start when the newest scheduled one is older than the interval", async () => {
    const stale = journalWithSnapshotAged(30);
    const recorder = startRuntime();
    const run = await runtime!.catchUp;
    expect(run?.ok).toBe(true);
    const taken = run?.ok ? run.result.taken : [];
    expect(taken).toEqual([
      {
        clusterId: recorder.clusterIdentity!.clusterId,
        id: expect.any(String),
        complete: true,
        missing: [],
      },
    ]);
    // Then it follows the schedule: the registered binding is unchanged and runs as before.
    expect(runtime!.snapshotSchedule().every).toBe(24);
    await runtime!.stop();
    expect(snapshotIds()).toEqual([stale, taken[0].id]);
  });

  it("takes none when the newest scheduled snapshot is younger than the interval", async () => {
    const fresh = journalWithSnapshotAged(23);
    startRuntime();
    expect(await runtime!.catchUp).toBeNull();
    await runtime!.stop();
    expect(snapshotIds()).toEqual([fresh]);
  });

  it("gives the event loop back between slices while it reads, and stores what a plain snapshot computes", async () => {
    const recorder = startRuntime();
    await runtime!.catchUp;
    // Many namespaces' objects in the journal, written through the recorder's own writer.
    const journal = recorder.openJournal!;
    const key = { ...recorder.status()[0].key };
    const objects = Array.from({ length: 400 }, (_, i) => ({
      ...cm(`o-${i}`, 100 + i),
      metadata: {
        name: `o-${i}`,
        namespace: `ns-${i % 40}`,
        uid: `u-${i}`,
        resourceVersion: String(100 + i),
      },
    }));
    const { baselineRecords } = await import("./event");
    journal.append({
      records: baselineRecords({
        stream: key,
        listResourceVersion: "600",
        listedAt: new Date().toISOString(),
        objects,
        kind: "ConfigMap",
      }),
      checkpoints: [],
    });
    let turns = 0;
    let spinning = true;
    const spin = (): void => {
      if (!spinning) return;
      turns++;
      setImmediate(spin);
    };
    spin();
    const now = new Date(Date.now() + 1000);
    const run = await runtime!.runScheduledSnapshot(now);
    spinning = false;
    expect(run.ok || run.error.message).toBe(true);
    // One turn per namespace at least: 40 namespaces plus the stream's coverage.
    expect(turns).toBeGreaterThan(40);
    const plain = snapshot(journal, recorder.clusterIdentity!.clusterId, now.toISOString(), "x", {
      withoutObjects: true,
    }).data;
    const stored = listSnapshots(journal).at(-1)!;
    expect(stored).toMatchObject({
      objectCount: plain.objectCount,
      watermarks: plain.watermarks,
      complete: plain.complete,
    });
    // The new baseline did not list "a", so it is gone: the 400 listed remain.
    expect(plain.objectCount).toBe(400);
  });

  it("never opens a journal the recorder refused as damaged", async () => {
    writeJournal(tmp.path, damagedJournalRecords(300));
    damagePages(tmp.path, 0.85, 1000);
    const files = () =>
      readdirSync(tmp.dir)
        .sort()
        .map(
          f =>
            `${f}:${createHash("sha256")
              .update(readFileSync(`${tmp.dir}/${f}`))
              .digest("hex")}`,
        );
    const recorder = startRuntime();
    await runtime!.catchUp;
    expect(recorder.health().state).toBe("refused");
    const before = files();
    const run = await runtime!.runScheduledSnapshot();
    expect(!run.ok && run.error.message).toMatch(/refused as damaged/);
    expect(files()).toEqual(before);
  });
});

describe("processRuntime", () => {
  it("is one runtime per process, built from its environment on first use", () => {
    expect(processRuntime()).toBe(processRuntime());
    // Jest is neither the watcher nor `pepr dev`.
    expect(processRuntime().recorder()).toBeNull();
  });
});
