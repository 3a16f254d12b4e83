import type { KrplyConfig } from "../config";
import { streamIdOf } from "../event";
import { JournalError, openJournal, type Journal, type JournalOptions } from "../journal";
import { clientFor, loadKubeConfig, type KubeClient } from "../kube/client";
import { serverResources } from "../kube/discovery";
import { logger } from "../log/logger";
import { RecorderMetrics } from "../metrics/recorder-metrics";
import { clusterIdentity, type ClusterIdentity } from "./cluster-identity";
import { startCheckpointMirror } from "./mirror";
import { planStreams, resourceOfCrd, selects, specsFor, type Selection } from "./selection";
import { Supervisor } from "./supervisor";
import type { EngineOptions, StreamStatus } from "./types";

const log = logger("recorder");

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
  /** Delay between attempts to open the journal; 0 fails at once (the CLI). */
  journalRetryMs: number;
}

/** The recorder's part of the krply configuration (the environment, in the cluster). */
export function recorderConfigOf(config: KrplyConfig): RecorderConfig {
  return {
    journalPath: config.journalPath,
    selection: config.selection,
    engine: config.engine,
    mirrorEveryMs: config.mirrorEveryMs,
    journalRetryMs: config.journalRetryMs,
  };
}

/** The recorder process: journal, cluster identity, discovery, supervisor, CRD-driven streams, mirror. */
export class Recorder {
  readonly metrics: RecorderMetrics;
  private journal: Journal | null = null;
  private supervisor: Supervisor | null = null;
  private identity: ClusterIdentity | null = null;
  private mirror: { tick(): Promise<void>; stop(): void } | null = null;
  private stopped = false;
  private ready: Promise<void> | null = null;

  constructor(
    private readonly config: RecorderConfig,
    private readonly deps: {
      client?: KubeClient;
      metrics?: RecorderMetrics;
      /** Receives the coalesced watermark mirror (the Pepr Store in the cluster). */
      mirror?: (value: string) => void | Promise<void>;
    } = {},
  ) {
    this.metrics = deps.metrics ?? new RecorderMetrics();
  }

  /** Opens the journal (retrying until it can), then starts every selected stream. */
  start(): Promise<void> {
    this.ready ??= this.boot();
    return this.ready;
  }

  private async boot(): Promise<void> {
    this.metrics.journalUp.set(0);
    const journal = await this.openWithRetry();
    if (!journal) return;
    this.journal = journal;
    this.metrics.journalUp.set(1);
    const client =
      this.deps.client ??
      (await clientFor(
        loadKubeConfig({ kubeconfig: this.config.kubeconfig, context: this.config.context }),
      ));
    this.identity = await clusterIdentity(client);
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
    this.supervisor = new Supervisor({
      client,
      journal,
      engine: this.config.engine,
      metrics: this.metrics,
    });
    for (const s of specs) this.supervisor.add(s);
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

  // A missing volume, a newer schema or corruption: say so and retry, never fall back to a temp file.
  private async openWithRetry(): Promise<Journal | null> {
    for (;;) {
      if (this.stopped) return null;
      try {
        // fsck of every chain and checkpoint first: a journal that fails it is not written to.
        return openJournal(this.config.journalPath, { ...this.config.journal, check: "full" });
      } catch (err) {
        const code = err instanceof JournalError ? err.code : "IO";
        this.metrics.journalOpenFailures.inc({ code });
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

  /** Stops streams (committing what is queued), writes a last mirror, closes the journal. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.ready?.catch((err: unknown) =>
      log.warn({ err }, "stopping a recorder that had failed to start"),
    );
    await this.supervisor?.stop();
    this.mirror?.stop();
    await this.mirror?.tick();
    this.journal?.close();
  }
}
