import { z } from "zod";
import type { StreamKey } from "../event";
import type { KubeClient } from "../kube/client";
import type { RecorderMetrics } from "../metrics/recorder-metrics";
import type { Logger } from "../log/logger";
import type { JournalSink } from "./sink";

/** Tunables of the stream engine; zod-checked because they arrive from env and flags. */
export const EngineOptionsSchema = z.object({
  pageSize: z.number().int().positive().default(500),
  backoffMinMs: z.number().int().nonnegative().default(500),
  backoffMaxMs: z.number().int().positive().default(30_000),
  /** Longest probe interval while a stream is forbidden or its resource is gone. */
  slowRetryMs: z.number().int().positive().default(30_000),
  watchTimeoutMinS: z.number().int().positive().default(240),
  watchTimeoutMaxS: z.number().int().positive().default(480),
  /** A watch that sends no byte (not even a bookmark) this long is considered dead. */
  silenceMs: z.number().int().positive().default(150_000),
  queueCapacity: z.number().int().positive().default(5_000),
  maxBatch: z.number().int().positive().default(2_000),
  /**
   * Shortest time between two commits (JournalSink.commitEveryMs) once the recorder has listed
   * OPTIMIZE_AFTER_BYTES (a big cluster; heap-trim.ts); before that each event commits at once, so
   * nothing waits in memory. Every commit writes its pages to the WAL and waits for an fsync on the
   * event loop; at a big cluster's write rate, one commit per event cost 30% more CPU per event and
   * left the loop waiting on fsyncs, so a slow disk held every stream back (docs/benchmarks.md,
   * scale). A lone event after a quiet spell still commits at once. Every 100 ms rather than 50: each
   * commit rewrites the index pages its events share, and at 200 writes/s the recorder spent 9% less
   * CPU per event, for at most 50 ms more lag (docs/benchmarks.md, scale, 2026-12-02 session 12).
   */
  commitEveryMs: z.number().int().nonnegative().default(100),
  /**
   * SQLite's page cache of the recorder's journal (KiB) once it has listed OPTIMIZE_AFTER_BYTES; before
   * that the recorder keeps RECORDER_JOURNAL_CACHES' small one. Every event of a big cluster looks up
   * its object's identity and newest version in indexes spread over the whole file, and often reads
   * its base keyframe; with 8 MiB cached those pages are read back from the OS again and again. On a
   * busy host (load 8-13) that cost a recorder of 150k objects 2.5 to 4 times the CPU per event of
   * one with 16-32 MiB beside it; on a quiet host the two cost the same (docs/benchmarks.md, scale).
   */
  bigClusterPageCacheKiB: z.number().int().positive().default(32_768),
  /**
   * Object identities the journal keeps mapped to their ids once the recorder has listed
   * OPTIMIZE_AFTER_BYTES (Journal.setIdentityCacheSize; 50,000 before). Past its bound the map starts
   * over, so in a cluster of more objects nearly every event read its object's id from the file
   * again. About 75 bytes of heap per identity seen: 11 MiB for 150k objects, 37 MiB at the bound.
   */
  bigClusterIdentities: z.number().int().positive().default(500_000),
  /**
   * Where the journal's appends commit: `auto` moves them to its writer thread once the recorder has
   * listed a big cluster (bigClusterTuning), `on` from the start, `off` never. The thread lets the
   * event loop plan the next batch (diff, encode) while the last one commits, for the price of an
   * isolate and a page cache of its own (40-60 MiB; docs/benchmarks.md, scale).
   */
  writerThread: z.enum(["auto", "on", "off"]).default("auto"),
});
export type EngineOptions = z.infer<typeof EngineOptionsSchema>;

/** One list/watch: the key that names it plus what the engine needs to call the server. */
export interface StreamSpec {
  key: StreamKey;
  /** Item kind (list items omit it). */
  kind: string;
  /** Collection path, e.g. /api/v1/namespaces/ns/configmaps. */
  path: string;
}

/** Where a stream stands now. */
export type StreamPhase =
  | "starting"
  | "listing"
  | "watching"
  | "backoff"
  | "unavailable"
  | "stopped";

/** Per-stream health as the supervisor reports it. */
export interface StreamStatus {
  streamId: string;
  key: StreamKey;
  phase: StreamPhase;
  durableRv: string | null;
  /**
   * The stream holds a baseline it resumes from: a list committed in this process, or a checkpoint
   * with no open gap. False while it (re)lists, so readiness waits for it (src/watch/readiness.ts).
   */
  baselined: boolean;
  coverage: "available" | "unavailable" | "stopped" | "unknown";
  lastEventAt: string | null;
  /** Read-to-commit time of the last committed batch. */
  lagMs: number;
  events: number;
  reconnects: number;
  gaps: number;
  malformed: number;
  lastError: string | null;
}

/** Shared by every stream of one supervisor. */
export interface EngineContext {
  client: KubeClient;
  sink: JournalSink;
  metrics: RecorderMetrics;
  log: Logger;
  options: EngineOptions;
  random: () => number;
  /** Frees the garbage of LIST answers as they accumulate (see heap-trim.ts). */
  trimmer?: { listed(totalRead: number): void };
}

/** Where a stream starts: from the journal's durable checkpoint, or with a fresh list. */
export interface ResumePoint {
  rv: string | null;
  /** True when the journal holds no baseline or an unresolved gap for this stream. */
  needList: boolean;
  coverage: StreamStatus["coverage"];
  /**
   * The stream's last durable checkpoint (or heartbeat) when it resumes after the recorder was
   * down; the resume records the window from then, whose changes are observed late.
   */
  downSince?: string | null;
}
