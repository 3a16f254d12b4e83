import type { KrplyConfig } from "../config";
import { coverageRecord, gapRecord, parseStreamId, streamIdOf, type JournalRecord } from "../event";
import {
  JournalError,
  openJournal,
  openJournalView,
  type FsckReport,
  type Journal,
  type JournalOptions,
  type WriterThreadStatus,
} from "../journal";
import { clientFor, loadKubeConfig, type KubeClient } from "../kube/client";
import { serverResources } from "../kube/discovery";
import { logger } from "../log/logger";
import { RecorderMetrics } from "../metrics/recorder-metrics";
import { clusterIdentity, type ClusterIdentity } from "./cluster-identity";
import { backoffDelay } from "./backoff";
import { CrdFollower } from "./crd-follower";
import { lostStreams, parseMirror, startCheckpointMirror } from "./mirror";
import { planStreams, resourceOfCrd, selects, specsFor, type Selection } from "./selection";
import { notReadyReasons, streamReadiness, type StreamReadiness } from "./readiness";
import { Supervisor } from "./supervisor";
import type { EngineOptions, StreamSpec, StreamStatus } from "./types";

const log = logger("recorder");

/**
 * The recorder's journal caches, smaller than the journal's defaults (10k versions, 64 MiB of pages),
 * which are sized for bulk appends. The recorder appends at the API server's rate, where a cache miss
 * (one keyframe read back, tens of microseconds) costs nothing measurable, while 10k cached ConfigMaps
 * of 4 KiB held about 50 MiB of heap, and the page cache grows to its bound as the journal does
 * (docs/benchmarks.md, recorder and scale). The start's tail check decodes the newest 512 records:
 * every one costs a keyframe parse, a patch and a hash, which for 2000 took 4.7 s of a 6.5 s start
 * on a loaded machine, and 512 still span the pages the next appends build on (a batch of 500 fills
 * about eight). The tier of keyframe bodies behind the version cache gets half the journal's 16 MiB:
 * it holds bodies as stored (about 650 bytes per object in the journal bench's workload, overhead
 * included), so 8 MiB answer the misses of some 12k objects without reading the file, and it fills
 * only as objects are stored, so a small cluster's recorder pays for its own objects only.
 * Options from the configuration override these.
 */
export const RECORDER_JOURNAL_CACHES = {
  lastVersionCacheSize: 2048,
  keyframeBodyCacheBytes: 8 * 1024 * 1024,
  pageCacheKiB: 8192,
  tailRows: 512,
};

/** Everything the recorder needs to run: from the config in the cluster, from flags in the CLI. */
export interface RecorderConfig {
  journalPath: string;
  selection: Selection;
  kubeconfig?: string;
  context?: string;
  engine?: Partial<EngineOptions>;
  journal?: JournalOptions;
  /** How often the checkpoint mirror may write. */
  mirrorEveryMs: number;
  /**
   * Delay between attempts to open the journal, and the first delay before a failed start is retried
   * (doubling up to startRetryMaxMs); 0 fails at once (the CLI).
   */
  journalRetryMs: number;
  /** Longest delay between two start attempts; default one minute. */
  startRetryMaxMs?: number;
  /** Period of the scheduled full check of the journal; 0 or unset: none (the CLI). */
  fsckEveryMs?: number;
  /**
   * Watch CustomResourceDefinitions itself and start or stop their streams (`krply record`). In the
   * cluster Pepr's Reconcile binding calls onCrd instead.
   */
  followCrds?: boolean;
}

/**
 * Where the recorder stands. `retrying`: a start failed (network, discovery) and is tried again with
 * backoff. `refused`: the journal is damaged; nothing is written until someone repairs it (docs/operations.md).
 */
export type RecorderState = "starting" | "retrying" | "running" | "refused" | "stopped";

/**
 * What readiness reports (GET /readyz on the metrics port): ready only while the recorder runs, its
 * journal takes appends, and every selected stream holds a baseline (src/watch/readiness.ts).
 */
export interface RecorderHealth {
  state: RecorderState;
  ready: boolean;
  /** Why it is not ready; empty when it is. */
  reasons: string[];
  /** Failed start attempts since the process started. */
  failedStarts: number;
  /** Failed attempts to open the journal since the process started. */
  journalOpenFailures: number;
  /** Why the last start or open failed, or why the journal was refused; null when none failed. */
  lastError: string | null;
  /**
   * The journal: open or not, why its newest append failed, and its writer thread (null while it is
   * not open). A writer thread that failed leaves the recorder ready: appends run on the main thread.
   */
  journal: {
    open: boolean;
    appendError: string | null;
    writerThread: WriterThreadStatus | null;
  };
  streams: StreamReadiness;
}

/** Thrown when the journal fails its check: a damaged file is never written to, and retrying cannot fix it. */
export class JournalRefusedError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "JournalRefusedError";
  }
}

const errorText = (err: unknown): string => {
  const msg = err instanceof Error ? err.message : String(err);
  const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : "";
  return msg + cause;
};

/** The recorder's part of the krply configuration (the environment, in the cluster). */
export function recorderConfigOf(config: KrplyConfig): RecorderConfig {
  return {
    journalPath: config.journalPath,
    selection: config.selection,
    engine: config.engine,
    mirrorEveryMs: config.mirrorEveryMs,
    journalRetryMs: config.journalRetryMs,
    fsckEveryMs: config.fsckEveryHours * 3_600_000,
    journal: journalOptionsOf(config),
  };
}

/** The journal's part of the configuration: what it keeps, what it redacts, its writer thread's script. */
export function journalOptionsOf(
  config: Pick<KrplyConfig, "retention" | "redact" | "writerScript">,
): JournalOptions {
  const { budget, maxAgeMs } = config.retention;
  return {
    retention: {
      ...("bytes" in budget ? { maxBytes: budget.bytes } : { volumePercent: budget.percent }),
      maxAgeMs,
    },
    redact: config.redact,
    ...(config.writerScript ? { writerScript: config.writerScript } : {}),
  };
}

/** The recorder process: journal, cluster identity, discovery, supervisor, CRD-driven streams, mirror. */
export class Recorder {
  readonly metrics: RecorderMetrics;
  private journal: Journal | null = null;
  private supervisor: Supervisor | null = null;
  private identity: ClusterIdentity | null = null;
  private mirror: { tick(): Promise<void>; stop(): void } | null = null;
  private crds: CrdFollower | null = null;
  /** The lost-journal check runs once per process, not again on a retried start. */
  private lostChecked = false;
  private stopped = false;
  private ready: Promise<void> | null = null;
  private state: RecorderState = "starting";
  private failedStarts = 0;
  private journalOpenFailures = 0;
  private lastError: string | null = null;
  private wakeRetry: (() => void) | null = null;
  private fsckTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly config: RecorderConfig,
    private readonly deps: {
      client?: KubeClient;
      metrics?: RecorderMetrics;
      /** Receives the coalesced watermark mirror (the Pepr Store in the cluster). */
      mirror?: (value: string) => void | Promise<void>;
      /** Reads the mirror back at start, to detect a lost or replaced journal. */
      readMirror?: () => string | null | undefined | Promise<string | null | undefined>;
    } = {},
  ) {
    this.metrics = deps.metrics ?? new RecorderMetrics();
    this.metrics.reportReadiness(() => this.health().ready);
  }

  /**
   * Opens the journal (retrying until it can), then starts every selected stream. A failed start is
   * retried with backoff until it succeeds or the recorder stops; with journalRetryMs 0 (the CLI) the
   * first failure rejects instead. A damaged journal is refused: the promise resolves, health() says
   * why, and nothing is written.
   */
  start(): Promise<void> {
    this.ready ??= this.bootWithRetry();
    return this.ready;
  }

  /** The recorder's state for readiness probes; see RecorderHealth. */
  health(): RecorderHealth {
    const input = {
      state: this.state,
      failedStarts: this.failedStarts,
      journalOpenFailures: this.journalOpenFailures,
      lastError: this.lastError,
      journal: {
        open: this.journal !== null,
        appendError: this.supervisor?.appendError() ?? null,
        writerThread: this.journal?.writerThreadStatus() ?? null,
      },
      streams: streamReadiness(this.status()),
    };
    const reasons = notReadyReasons(input);
    return { ...input, ready: reasons.length === 0, reasons };
  }

  private setState(state: RecorderState): void {
    this.state = state;
    this.metrics.refused.set(state === "refused" ? 1 : 0);
  }

  private async bootWithRetry(): Promise<void> {
    this.setState("starting");
    for (let attempt = 0; ; attempt++) {
      if (this.stopped) return;
      try {
        await this.boot();
        if (this.stopped) return;
        this.setState("running");
        this.scheduleFsck();
        return;
      } catch (err) {
        this.lastError = errorText(err);
        if (err instanceof JournalRefusedError) {
          // Retrying cannot repair a file, and re-running the check would only load the disk.
          this.setState("refused");
          log.error(
            { err, path: this.config.journalPath },
            "the journal is damaged; krply records nothing until it is repaired: run `krply fsck --salvage` (docs/operations.md)",
          );
          if (this.config.journalRetryMs === 0) throw err;
          return;
        }
        this.failedStarts++;
        this.metrics.startFailures.inc();
        if (this.config.journalRetryMs === 0 || this.stopped) throw err;
        const delayMs = backoffDelay(
          attempt,
          {
            minMs: Math.max(1, this.config.journalRetryMs),
            maxMs: this.config.startRetryMaxMs ?? 60_000,
          },
          Math.random,
        );
        this.setState("retrying");
        log.error(
          { err, attempt: attempt + 1, retryMs: delayMs },
          "recorder start failed; retrying",
        );
        await new Promise<void>(resolve => {
          const t = setTimeout(done, delayMs);
          function done(): void {
            clearTimeout(t);
            resolve();
          }
          this.wakeRetry = done;
        });
        this.wakeRetry = null;
      }
    }
  }

  /** One start attempt; what an earlier attempt finished (the open journal, the identity) is kept. */
  private async boot(): Promise<void> {
    if (!this.journal) {
      this.metrics.journalUp.set(0);
      const journal = await this.openWithRetry();
      if (!journal) return;
      this.journal = journal;
      this.metrics.journalUp.set(1);
      this.metrics.journalBudget.set(journal.stats().budgetBytes ?? 0);
    }
    const journal = this.journal;
    const client =
      this.deps.client ??
      (await clientFor(
        loadKubeConfig({ kubeconfig: this.config.kubeconfig, context: this.config.context }),
      ));
    this.identity ??= await clusterIdentity(client);
    await this.detectLostHistory(journal, this.identity.clusterId);
    const discovery = await serverResources(client);
    for (const f of discovery.failed) log.warn(f, "discovery of a group version failed; skipped");
    const { specs, unresolved } = planStreams(
      this.config.selection,
      discovery.resources,
      this.identity.clusterId,
    );
    if (unresolved.length > 0) {
      log.warn({ unresolved }, "selected resources not served yet; a matching CRD will start them");
    }
    if (this.stopped) return;
    this.retireUnselected(journal, specs, discovery.failed, this.identity.clusterId);
    this.supervisor = new Supervisor({
      client,
      journal,
      engine: this.config.engine,
      metrics: this.metrics,
      onJournalDamaged: err => void this.refuse(errorText(err)),
    });
    for (const s of specs) this.supervisor.add(s);
    if (this.config.followCrds) {
      this.crds = new CrdFollower(client, (crd, phase) => this.onCrd(crd, phase), log);
      this.crds.start();
    }
    log.info({ cluster: this.identity, streams: specs.length }, "recorder started");
    if (this.deps.mirror) {
      const sup = this.supervisor;
      this.mirror = startCheckpointMirror(
        () => sup.watermarks(),
        this.deps.mirror,
        this.config.mirrorEveryMs,
        err => log.warn({ err }, "checkpoint mirror write failed; the journal is unaffected"),
      );
    }
  }

  /**
   * A journal that lost history must not start as if nothing came before. The Store mirror holds the
   * watermarks the previous journal had made durable; a stream whose mirrored RV this journal does
   * not hold (a PVC recreated, a volume restored from an old backup) gets a GAP from the journal's
   * own last position, so every answer about the time before now says that it is incomplete.
   */
  private async detectLostHistory(journal: Journal, clusterId: string): Promise<void> {
    if (!this.deps.readMirror || this.lostChecked) return;
    let value: string | null | undefined;
    try {
      value = await this.deps.readMirror();
    } catch (err) {
      log.warn({ err }, "cannot read the checkpoint mirror; a lost journal would go unnoticed");
      return;
    }
    const watermarks = parseMirror(value);
    if (!watermarks) {
      this.lostChecked = true;
      return;
    }
    const infos = new Map(journal.streams().map(s => [s.streamId, s]));
    const lost = lostStreams(watermarks, clusterId, {
      lastRv: id => (infos.has(id) ? infos.get(id)!.lastResourceVersion : undefined),
      hasResourceVersion: (id, rv) => journal.hasResourceVersion(id, rv),
    });
    if (lost.length === 0) {
      this.lostChecked = true;
      return;
    }
    const now = new Date().toISOString();
    const records: JournalRecord[] = lost.map(l =>
      gapRecord({
        stream: parseStreamId(l.streamId),
        lastGoodResourceVersion: l.journalRv ?? "",
        reason:
          `journal lost or replaced: the Store mirror shows this stream recorded up to ` +
          `resourceVersion ${l.mirroredRv}, which this journal does not hold; history before ${now} is incomplete`,
        detectedAt: now,
      }),
    );
    journal.append({ records, checkpoints: [], streams: lost.map(l => parseStreamId(l.streamId)) });
    this.lostChecked = true;
    for (const l of lost) this.metrics.gaps.inc({ stream: l.streamId });
    log.error(
      { streams: lost.map(l => l.streamId) },
      "the journal lost history the Store mirror had seen; recorded a gap for each stream",
    );
  }

  /**
   * Streams the journal was recording for this cluster that this start does not run (the selection
   * changed, or their resource is no longer served) are marked stopped, so no answer calls their
   * frozen watermark current. Groups whose discovery failed are unknown, not gone, so they are kept.
   */
  private retireUnselected(
    journal: Journal,
    specs: StreamSpec[],
    failed: { groupVersion: string }[],
    clusterId: string,
  ): void {
    const running = new Set(specs.map(s => streamIdOf(s.key)));
    const unknown = new Set(failed.map(f => f.groupVersion));
    const now = new Date().toISOString();
    const records = journal
      .streams()
      .filter(s => s.key.clusterId === clusterId && s.state !== "stopped")
      .filter(s => !running.has(s.streamId))
      .filter(s => !unknown.has(s.key.group ? `${s.key.group}/${s.key.version}` : s.key.version))
      .map(s =>
        coverageRecord({
          stream: s.key,
          state: "stopped",
          reason: "no longer recorded: the selection changed or the resource is no longer served",
          observedAt: now,
        }),
      );
    if (records.length === 0) return;
    journal.append({ records, checkpoints: [] });
    log.info({ streams: records.map(r => r.streamId) }, "streams no longer recorded");
  }

  // A missing volume, a newer schema or corruption: say so and retry, never fall back to a temp file.
  private async openWithRetry(): Promise<Journal | null> {
    for (;;) {
      if (this.stopped) return null;
      try {
        // The schema and the newest records: start-up stays short however large the file grows.
        // The full check of every page and chain runs as `krply fsck` and as a scheduled job.
        // The lease refuses a second recorder on the same file (LEASED), retried like any open failure.
        return openJournal(this.config.journalPath, {
          check: "tail",
          recorderLease: true,
          ...RECORDER_JOURNAL_CACHES,
          ...this.config.journal,
        });
      } catch (err) {
        const code = err instanceof JournalError ? err.code : "IO";
        this.metrics.journalOpenFailures.inc({ code });
        this.journalOpenFailures++;
        // A JournalError's message already carries its cause's.
        this.lastError = err instanceof Error ? err.message : String(err);
        if (code === "CORRUPT") {
          throw new JournalRefusedError(`the journal at ${this.config.journalPath} is damaged`, {
            cause: err,
          });
        }
        if (this.config.journalRetryMs === 0) {
          throw new Error(`cannot open the journal at ${this.config.journalPath}`, { cause: err });
        }
        log.error(
          { err, path: this.config.journalPath, retryMs: this.config.journalRetryMs },
          "cannot open the journal; no stream starts until it opens",
        );
      }
      await new Promise(r => setTimeout(r, this.config.journalRetryMs));
    }
  }

  private scheduleFsck(): void {
    const every = this.config.fsckEveryMs ?? 0;
    if (every <= 0 || this.stopped) return;
    this.fsckTimer = setTimeout(() => {
      void this.runScheduledFsck().finally(() => this.scheduleFsck());
    }, every);
    this.fsckTimer.unref();
  }

  /**
   * The full check of the journal at low priority: through a read-only view of its own, a few
   * thousand rows per event-loop turn, so the streams keep running. Damage stops recording (refuse).
   * Returns the report, or null when it did not run (not running, stopped meanwhile, file busy).
   */
  async runScheduledFsck(): Promise<FsckReport | null> {
    if (this.state !== "running") return null;
    const started = Date.now();
    let report: FsckReport;
    try {
      const view = openJournalView(this.config.journalPath);
      try {
        const steps = view.fsckSteps();
        for (;;) {
          const r = steps.next();
          if (r.done) {
            report = r.value;
            break;
          }
          await new Promise(resolve => setImmediate(resolve));
          if (this.stopped) {
            steps.return(undefined as never);
            return null;
          }
        }
      } finally {
        view.close();
      }
    } catch (err) {
      const e = err instanceof JournalError ? err : null;
      if (e?.code !== "CORRUPT") {
        log.warn({ err }, "scheduled journal check could not run; trying again next time");
        return null;
      }
      report = { ok: false, checked: 0, problems: [e.message] };
    }
    this.metrics.fsckRuns.inc({ result: report.ok ? "ok" : "damaged" });
    log.info(
      { ok: report.ok, checked: report.checked, ms: Date.now() - started },
      "scheduled journal check done",
    );
    if (!report.ok) await this.refuse(report.problems.slice(0, 5).join("; "));
    return report;
  }

  /**
   * The journal is damaged: stop every stream without committing what is queued (nothing is written
   * on top of damage), close the journal, and say so once. Only a repair (`krply fsck --salvage`) and
   * a restart resume recording.
   */
  private async refuse(problems: string): Promise<void> {
    if (this.state === "refused" || this.state === "stopped") return;
    this.setState("refused");
    this.lastError = `the journal at ${this.config.journalPath} is damaged: ${problems}`;
    log.error(
      { path: this.config.journalPath, problems },
      "the journal is damaged; krply stopped recording: run `krply fsck --salvage` (docs/operations.md)",
    );
    if (this.fsckTimer) clearTimeout(this.fsckTimer);
    this.mirror?.stop();
    const sup = this.supervisor;
    this.supervisor = null;
    await sup?.halt();
    this.journal?.close();
    this.journal = null;
    this.metrics.journalUp.set(0);
  }

  /** Reconcile handler for CustomResourceDefinitions: start or stop the streams of a selected CRD. */
  async onCrd(crd: unknown, phase: "ADDED" | "MODIFIED" | "DELETED"): Promise<void> {
    await this.start();
    const sup = this.supervisor;
    if (!sup || !this.identity) return;
    const { resource, established } = resourceOfCrd(crd);
    if (!this.config.selection.resources.some(e => selects(e, resource))) return;
    const specs = specsFor(resource, this.config.selection, this.identity.clusterId);
    const name = `${resource.plural}.${resource.group}`;
    if (phase === "DELETED") {
      for (const s of specs)
        await sup.remove(streamIdOf(s.key), `CustomResourceDefinition ${name} deleted`);
      return;
    }
    if (!established) return; // its API is not served yet; the Established update follows
    // A CRD that now serves another version: the streams of the old one stop, with the reason.
    for (const st of sup.status()) {
      const k = st.key;
      if (k.group !== resource.group || k.resource !== resource.plural) continue;
      if (k.version === resource.version) continue;
      await sup.remove(
        st.streamId,
        `CustomResourceDefinition ${name} now serves ${resource.version}; ${k.version} is no longer recorded`,
      );
    }
    for (const s of specs) sup.add(s, `CustomResourceDefinition ${name} established`);
  }

  status(): StreamStatus[] {
    return this.supervisor?.status() ?? [];
  }

  get clusterIdentity(): ClusterIdentity | null {
    return this.identity;
  }

  /** The open journal, once boot has opened it. */
  get openJournal(): Journal | null {
    return this.journal;
  }

  /** Writes a last mirror, stops streams (committing what is queued), closes the journal. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wakeRetry?.();
    if (this.fsckTimer) clearTimeout(this.fsckTimer);
    await this.ready?.catch((err: unknown) =>
      log.warn({ err }, "stopping a recorder that had failed to start"),
    );
    await this.crds?.stop();
    // The last mirror goes out while the streams still report their watermarks: once stopped, the
    // supervisor has none, and an empty mirror would hide a lost journal at the next start.
    this.mirror?.stop();
    await this.mirror?.tick();
    await this.supervisor?.stop();
    this.journal?.close();
    if (this.state !== "refused") this.setState("stopped");
  }
}
