import { streamIdOf } from "../event";
import type { KubeClient } from "../kube/client";
import { JournalError, type Journal } from "../journal";
import { logger } from "../log/logger";
import { RecorderMetrics } from "../metrics/recorder-metrics";
import { JournalSink, type SinkItem } from "./sink";
import { HeapTrimmer, TRIM_EVERY_BYTES } from "./heap-trim";
import { StreamRunner } from "./stream";
import {
  EngineOptionsSchema,
  type EngineContext,
  type EngineOptions,
  type ResumePoint,
  type StreamSpec,
  type StreamStatus,
} from "./types";

export interface SupervisorOptions {
  client: KubeClient;
  journal: Journal;
  engine?: Partial<EngineOptions>;
  metrics?: RecorderMetrics;
  random?: () => number;
  /** Called after every commit (benchmarks measure end-to-end lag with it). */
  onCommit?: (items: SinkItem[], committedAt: number) => void;
  /** Called when an append finds the journal damaged; the owner decides to halt. */
  onJournalDamaged?: (err: JournalError) => void;
}

/** Where a stream resumes, from what the journal holds durably. */
export function resumePointOf(
  info: ReturnType<Journal["streams"]>[number] | undefined,
): ResumePoint {
  if (!info) return { rv: null, needList: true, coverage: "unknown", downSince: null };
  const resumes = info.lastResourceVersion !== null && info.baselinePresent;
  return {
    rv: info.lastResourceVersion,
    needList: !info.baselinePresent || info.openGaps > 0 || info.lastResourceVersion === null,
    coverage: info.state === "unavailable" || info.state === "stopped" ? info.state : "unknown",
    // Nothing watched the stream since its last checkpoint: whatever changed meanwhile arrives late.
    downSince: resumes ? info.lastObservedAt : null,
  };
}

/**
 * What the recorder changes once it has listed a big cluster (HeapTrimmer's onBigCluster): its event
 * rate, not its memory, sets the bar from then on. Commits share an fsync (commitEveryMs), the
 * journal's page cache grows to bigClusterPageCacheKiB, so the indexes every event looks up stay in
 * it, and its identity map to bigClusterIdentities, so an event finds its object's id without a read.
 * Its appends move to the journal's writer thread.
 */
export function bigClusterTuning(
  sink: JournalSink,
  journal: Journal,
  options: EngineOptions,
): () => void {
  return () => {
    sink.commitEvery(options.commitEveryMs);
    journal.setPageCacheKiB(options.bigClusterPageCacheKiB);
    journal.setIdentityCacheSize(options.bigClusterIdentities);
    // Appends then commit on the journal's writer thread while this one plans the next batch; a
    // small cluster keeps to one thread (the thread costs an isolate and a page cache of its own).
    if (options.writerThread === "auto") journal.enableWriterThread();
  };
}

const WRITER_THREAD_STATES = ["off", "pending", "running", "failed"] as const;

/** Runs every stream of one cluster against one journal and reports their health. */
export class Supervisor {
  readonly metrics: RecorderMetrics;
  private readonly runners = new Map<string, StreamRunner>();
  private readonly ctx: EngineContext;
  private readonly sink: JournalSink;
  private readonly gauges: NodeJS.Timeout;
  /** Why the newest append failed; null once a later one commits (readiness reports it). */
  private failingAppend: string | null = null;

  constructor(private readonly o: SupervisorOptions) {
    this.metrics = o.metrics ?? new RecorderMetrics();
    const options = EngineOptionsSchema.parse(o.engine ?? {});
    const metrics = this.metrics;
    this.sink = new JournalSink(
      o.journal,
      { capacity: options.queueCapacity, maxBatch: options.maxBatch },
      {
        onCommit: (items, at) => {
          this.failingAppend = null;
          for (const it of items) {
            for (const r of it.records)
              metrics.events.inc({ stream: it.owner.streamId, type: r.type });
          }
          o.onCommit?.(items, at);
        },
        onError: err => {
          metrics.appendFailures.inc();
          const cause = err.cause;
          this.failingAppend = err.message + (cause instanceof Error ? `: ${cause.message}` : "");
          if (cause instanceof JournalError && cause.code === "CORRUPT")
            o.onJournalDamaged?.(cause);
        },
        onRejected: (record, err) => {
          metrics.rejected.inc({ stream: record.streamId });
          this.ctx.log.error(
            { err, stream: record.streamId, eventId: record.eventId, type: record.type },
            "the journal refused a record; an ERROR record stands in its place and the stream goes on",
          );
        },
      },
    );
    this.ctx = {
      client: o.client,
      sink: this.sink,
      metrics,
      log: logger("watch"),
      options,
      random: o.random ?? Math.random,
      trimmer: new HeapTrimmer(
        TRIM_EVERY_BYTES,
        undefined,
        bigClusterTuning(this.sink, o.journal, options),
      ),
    };
    // `on` starts the thread with the first append; `auto` waits for a big cluster (bigClusterTuning).
    if (options.writerThread === "on") o.journal.enableWriterThread();
    this.gauges = setInterval(() => this.updateGauges(), 5000);
    this.gauges.unref();
  }

  /** Starts a stream unless it runs already; `announce` writes a COVERAGE_CHANGE (available) first. */
  add(spec: StreamSpec, announce?: string): boolean {
    const id = streamIdOf(spec.key);
    if (this.runners.has(id)) return false;
    const info = this.o.journal.streams().find(s => s.streamId === id);
    const runner = new StreamRunner(spec, this.ctx, resumePointOf(info));
    this.runners.set(id, runner);
    runner.start(announce).catch((err: unknown) => {
      this.ctx.log.error({ err, stream: id }, "stream loop crashed");
      this.runners.delete(id);
    });
    this.ctx.log.info({ stream: id, resume: resumePointOf(info) }, "stream started");
    return true;
  }

  /** Stops a stream and records that it is no longer covered (a coverage change: stopped). */
  async remove(streamId: string, reason: string): Promise<boolean> {
    const runner = this.runners.get(streamId);
    if (!runner) return false;
    this.runners.delete(streamId);
    await runner.stop(reason);
    return true;
  }

  /** Drops the connections of one stream or all; each resumes from its durable RV. */
  interrupt(streamId?: string): void {
    for (const [id, r] of this.runners) if (!streamId || id === streamId) r.interrupt();
  }

  has(streamId: string): boolean {
    return this.runners.has(streamId);
  }

  /** Why the newest journal append failed, or null when it committed (or none ran yet). */
  appendError(): string | null {
    return this.failingAppend;
  }

  /** Per-stream state, lag, last event, reconnects and gaps. */
  status(): StreamStatus[] {
    return [...this.runners.values()].map(r => r.status());
  }

  /** The last durable RV of every stream, for the checkpoint mirror. */
  watermarks(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const s of this.status()) if (s.durableRv !== null) out[s.streamId] = s.durableRv;
    return out;
  }

  private updateGauges(): void {
    const st = this.status();
    this.metrics.streams.set(st.length);
    this.metrics.degraded.set(st.filter(s => s.phase !== "watching").length);
    this.metrics.queueDepth.set(this.sink.depth);
    this.metrics.requestsWaiting.set(this.o.client.waitingRequests());
    const thread = this.o.journal.writerThreadStatus().state;
    for (const state of WRITER_THREAD_STATES)
      this.metrics.writerThread.set({ state }, state === thread ? 1 : 0);
    try {
      this.metrics.journalBytes.set(this.o.journal.sizeBytes());
    } catch (err) {
      this.ctx.log.warn({ err }, "cannot read journal size");
    }
  }

  /** Stops every stream and drops what is queued, committing nothing more (a damaged journal). */
  async halt(): Promise<void> {
    this.sink.refuse();
    await this.stop(null);
  }

  /**
   * Stops every stream; queued records are committed first, then each stream records that it
   * stopped (with the reason), so nothing later calls its frozen watermark current. `null` records
   * nothing, as a crash would not (a halt on a damaged journal, and fault tests).
   */
  async stop(reason: string | null = "recorder stopped"): Promise<void> {
    clearInterval(this.gauges);
    const all = [...this.runners.values()];
    this.runners.clear();
    await Promise.all(all.map(r => r.stop(reason ?? undefined)));
    this.updateGauges();
  }
}
