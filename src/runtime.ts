import { loadConfig, type Env, type KrplyConfig } from "./config";
import type { KubeClient } from "./kube/client";
import { logger, type Logger } from "./log/logger";
import { serveMetrics, type MetricsServer } from "./metrics/serve";
import { openJournalView, useNativeBinding } from "./journal";
import {
  catchUpDue,
  newestScheduled,
  nightlyConfigOf,
  runScheduledSnapshotInSlices,
  type NightlyResult,
} from "./materialize";
import { AuditIngestor, AuditMetrics } from "./audit";
import { Recorder, recorderConfigOf } from "./watch/recorder";

/** What a runtime reads and talks to; the capabilities pass process.env, tests pass their own. */
export interface RuntimeOptions {
  env: Env;
  /** The recorder's API client; by default it is built from the in-cluster config or kubeconfig. */
  client?: KubeClient;
  log?: Logger;
  /** How long a catch-up snapshot waits for every stream to watch before it runs anyway; 5 minutes. */
  catchUpWaitMs?: number;
}

/** The OnSchedule binding of the scheduled snapshot, in Pepr's shape. */
export interface SnapshotSchedule {
  name: string;
  every: number;
  unit: "hours";
  startTime: Date;
  /** Never rejects: Pepr does not await or catch it, so every failure is logged and returned. */
  run: () => Promise<SnapshotRun>;
}

/** What one scheduled run did, or why it did nothing. */
export type SnapshotRun = { ok: true; result: NightlyResult } | { ok: false; error: Error };

/** Writes the checkpoint mirror somewhere other pods can read it (the Pepr Store). */
export type MirrorWriter = (value: string) => void | Promise<void>;
/** Reads the checkpoint mirror back (the Pepr Store), to detect a lost journal at start. */
export type MirrorReader = () => string | null | undefined;

type Loaded = { config: KrplyConfig } | { error: unknown };

/**
 * What the capabilities run: the configuration, the recorder and the scheduled snapshot, each built
 * on first use and reused after. Creating one reads nothing and starts nothing.
 */
export class Runtime {
  private loaded: Loaded | undefined;
  private built: Recorder | null | undefined;
  private mirrorTo: MirrorWriter | null = null;
  private metricsServer: Promise<MetricsServer | null> | null = null;
  private mirrorFrom: MirrorReader | null = null;
  private snapshotting = false;
  private stopping = false;
  /** The catch-up check that follows the recorder's start; tests await it. */
  catchUp: Promise<SnapshotRun | null> | null = null;
  private readonly log: Logger;

  constructor(private readonly options: RuntimeOptions) {
    this.log = options.log ?? logger("runtime");
  }

  /**
   * Pepr loads the module in the admission pods, the watcher and `pepr dev`. Only the watcher (and dev,
   * which is both) records, because the journal takes a single writer.
   */
  get records(): boolean {
    const env = this.options.env;
    return env.PEPR_WATCH_MODE === "true" || env.PEPR_MODE === "dev";
  }

  /** The configuration, parsed once; throws the ConfigError that names every bad variable. */
  config(): KrplyConfig {
    const loaded = this.load();
    if ("error" in loaded) throw loaded.error;
    return loaded.config;
  }

  private load(): Loaded {
    if (!this.loaded) {
      try {
        this.loaded = { config: loadConfig(this.options.env) };
      } catch (error) {
        this.loaded = { error };
      }
    }
    return this.loaded;
  }

  /**
   * The recorder of this process, built and started on the first call; null where this process does
   * not record or the configuration is invalid (logged once, here).
   */
  recorder(): Recorder | null {
    if (this.built !== undefined) return this.built;
    if (!this.records) return (this.built = null);
    let config: KrplyConfig;
    try {
      config = this.config();
    } catch (err) {
      this.log.error({ err }, "krply does not record: its configuration is invalid");
      return (this.built = null);
    }
    useNativeBinding(config.sqliteBinding);
    const recorder = new Recorder(recorderConfigOf(config), {
      client: this.options.client,
      mirror: value => {
        // A failed write is retried on the next tick, so nothing is lost before the Store is ready.
        if (!this.mirrorTo) throw new Error("the Pepr Store is not ready yet");
        return this.mirrorTo(value);
      },
      // Built before the Store was ready (a CRD reconcile came first), the check has nothing to read.
      readMirror: () => this.mirrorFrom?.() ?? null,
    });
    this.built = recorder;
    this.catchUp = recorder
      .start()
      .then(() => this.followAudit(recorder, config.auditLogPath))
      .then(() => this.catchUpSnapshot())
      .catch((err: unknown) => {
        this.log.error({ err }, "krply recorder failed to start");
        return null;
      });
    this.metricsServer = this.serveRecorderMetrics(recorder, config.metrics);
    return recorder;
  }

  private readonly auditStop = new AbortController();
  private auditDone: Promise<void> | null = null;

  /**
   * Follows the API server's audit log into the recorder's journal, when one is configured. The
   * follower waits for a file that is not there yet, so a missing mount is logged by the follower's
   * counts, not fatal; a failure ends only the following, never the recording.
   */
  private followAudit(recorder: Recorder, path: string | null): void {
    const journal = recorder.openJournal;
    const identity = recorder.clusterIdentity;
    if (!path || !journal || !identity || this.stopping) return;
    const ingestor = new AuditIngestor(
      journal,
      { clusterId: identity.clusterId },
      new AuditMetrics(recorder.metrics.registry),
    );
    this.auditDone = ingestor
      .follow(path, this.auditStop.signal)
      .done.catch((err: unknown) =>
        this.log.error({ err, path }, "following the audit log failed"),
      );
    this.log.info({ path }, "following the API server's audit log");
  }

  /** The recorder's metrics endpoint, where this process records and it is on; never rejects. */
  private async serveRecorderMetrics(
    recorder: Recorder,
    at: KrplyConfig["metrics"],
  ): Promise<MetricsServer | null> {
    if (!at) return null;
    try {
      const server = await serveMetrics(recorder.metrics.registry, {
        ...at,
        readiness: () => recorder.health(),
      });
      this.log.info(
        { host: at.host, port: server.port },
        "krply metrics served at /metrics, readiness at /readyz, liveness at /livez",
      );
      return server;
    } catch (err) {
      // Recording matters more than its metrics: a taken port is logged, not fatal.
      this.log.error({ err, ...at }, "krply metrics endpoint failed to start");
      return null;
    }
  }

  /** The port of the recorder's /metrics endpoint once it listens; null where none is served. */
  async metricsPort(): Promise<number | null> {
    return (await this.metricsServer)?.port ?? null;
  }

  /**
   * Pepr's Store is ready: the checkpoint mirror writes into it from now on, the recorder reads it
   * back once at start to detect a lost journal, and recording starts.
   */
  storeReady(write: MirrorWriter, read?: MirrorReader): Recorder | null {
    this.mirrorTo = write;
    this.mirrorFrom = read ?? null;
    return this.recorder();
  }

  /**
   * Reconcile handler for CustomResourceDefinitions: starts or stops the streams of a selected CRD.
   * `phase` is Pepr's watch phase; anything but ADDED or DELETED is an update.
   */
  async onCrd(crd: unknown, phase: string): Promise<void> {
    const recorder = this.recorder();
    if (!recorder) return;
    await recorder.onCrd(crd, phase === "ADDED" || phase === "DELETED" ? phase : "MODIFIED");
  }

  /**
   * The schedule to register. Pepr takes startTime when the binding is registered, which is while the
   * module loads, in every pod; so this never throws. With an invalid configuration it registers the
   * default schedule, and each run logs the configuration error instead of taking a snapshot.
   */
  snapshotSchedule(now = new Date()): SnapshotSchedule {
    const loaded = this.load();
    const settings = ("config" in loaded ? loaded.config : loadConfig({})).snapshot;
    const schedule = nightlyConfigOf(settings, now);
    return {
      name: "krply-scheduled-snapshot",
      every: schedule.everyHours,
      unit: "hours",
      startTime: schedule.startTime,
      run: () => this.runScheduledSnapshot(),
    };
  }

  /**
   * After a start: when the newest scheduled snapshot is at least one interval old (or there is none),
   * take one now, since Pepr's schedule first fires one interval after the pod starts. It waits until
   * every stream watches (at most catchUpWaitMs), so the snapshot describes the present.
   */
  async catchUpSnapshot(now?: Date): Promise<SnapshotRun | null> {
    const recorder = this.built;
    if (!recorder || recorder.health().state !== "running") return null;
    const settings = this.config().snapshot;
    const deadline = Date.now() + (this.options.catchUpWaitMs ?? 300_000);
    while (!this.stopping && Date.now() < deadline) {
      const st = recorder.status();
      if (st.length > 0 && st.every(s => s.phase === "watching")) break;
      await new Promise(r => setTimeout(r, 200));
    }
    const journal = recorder.openJournal;
    if (this.stopping || !journal) return null;
    const at = now ?? new Date();
    const newest = newestScheduled(journal);
    if (!catchUpDue(newest, settings.everyHours, at)) {
      this.log.info(
        { newest: newest?.toISOString() },
        "krply scheduled snapshot is recent; no catch-up",
      );
      return null;
    }
    this.log.info(
      { newest: newest?.toISOString() ?? null, everyHours: settings.everyHours },
      "krply takes a catch-up snapshot: the newest scheduled one is older than the interval",
    );
    return this.runScheduledSnapshot(at);
  }

  /**
   * One scheduled run: a snapshot per recorded cluster, then expiry. Reads go through a read-only
   * view of their own in slices, so the recorder keeps reading its sockets; only the SNAPSHOT
   * records and the deletes go through the recorder's writer. A journal the recorder refused is not
   * opened at all. Never rejects; a failure is logged and returned.
   */
  async runScheduledSnapshot(now = new Date()): Promise<SnapshotRun> {
    let claimed = false;
    try {
      const config = this.config();
      const recorder = this.recorder();
      if (!recorder) {
        throw new Error(
          "scheduled snapshots run only where krply records (the watcher controller), " +
            "because the journal takes a single writer",
        );
      }
      if (recorder.health().state === "refused") {
        throw new Error(
          `the journal at ${config.journalPath} was refused as damaged; no snapshot, and nothing ` +
            "else opens it until it is repaired (docs/operations.md)",
        );
      }
      const journal = recorder.openJournal;
      if (!journal) {
        throw new Error(
          `the journal at ${config.journalPath} is not open yet; no snapshot this time`,
        );
      }
      if (this.snapshotting) throw new Error("a scheduled snapshot is still running; skipped");
      this.snapshotting = claimed = true;
      const view = openJournalView(config.journalPath);
      let result: NightlyResult;
      try {
        result = await runScheduledSnapshotInSlices(journal, view, config.snapshot.keep, now);
      } finally {
        view.close();
      }
      for (const warning of result.warnings) this.log.warn({ warning }, "krply scheduled snapshot");
      this.log.info(
        { taken: result.taken, expired: result.expired.length, deleted: result.deleted },
        "krply scheduled snapshot done",
      );
      return { ok: true, result };
    } catch (err) {
      const error = err instanceof Error ? err : new Error(String(err), { cause: err });
      this.log.error({ err: error }, "krply scheduled snapshot failed");
      return { ok: false, error };
    } finally {
      if (claimed) this.snapshotting = false;
    }
  }

  /** Stops the recorder, if one was built, committing what it has queued. */
  async stop(): Promise<void> {
    this.stopping = true;
    // The follower appends to the recorder's journal, so it stops first.
    this.auditStop.abort();
    await this.auditDone;
    await this.built?.stop();
    await this.catchUp;
    await (await this.metricsServer)?.close();
  }
}

let shared: Runtime | undefined;

/** The runtime of this process, created on first use from process.env; never at import. */
export function processRuntime(): Runtime {
  shared ??= new Runtime({ env: process.env });
  return shared;
}
