import type { Journal } from "../journal";
import { logger } from "../log/logger";
import {
  CORRELATOR_DEFAULTS,
  Correlator,
  type AuditCounts,
  type CorrelatorOptions,
} from "./correlate";
import { parseAuditEvent, parseAuditLine, type AuditFacts } from "./facts";
import { LogFollower, type FollowStats } from "./follow";
import type { AuditMetrics } from "./metrics";
import { AuditEventListSchema } from "./schema";

const log = logger("audit");

export interface AuditIngestOptions extends Partial<Omit<CorrelatorOptions, "clusterId">> {
  /** The cluster whose API server wrote the audit events. */
  clusterId: string;
  /** Lines (and webhook items) longer than this are counted as huge and skipped. */
  maxLineBytes?: number;
  /** How often a followed log is polled at its end, and waiting events are looked up again. */
  pollMs?: number;
}

export const INGEST_DEFAULTS = {
  maxLineBytes: 4 * 1024 * 1024,
  pollMs: 250,
};

const IMPORT_CHUNK_BYTES = 4 << 20;

/** Result of a webhook batch. */
export interface WebhookResult {
  accepted: number;
  malformed: number;
}

/**
 * The audit pipeline: lines or webhook items are validated with zod, correlated with the journal,
 * and their correlations written through its front door. Malformed and huge input is counted and
 * skipped; nothing a log or a webhook caller sends can stop it.
 */
export class AuditIngestor {
  readonly correlator: Correlator;
  private readonly maxLineBytes: number;
  private readonly pollMs: number;

  constructor(
    journal: Journal,
    options: AuditIngestOptions,
    private readonly metrics?: AuditMetrics,
  ) {
    const { maxLineBytes, pollMs, ...rest } = options;
    this.maxLineBytes = maxLineBytes ?? INGEST_DEFAULTS.maxLineBytes;
    this.pollMs = pollMs ?? INGEST_DEFAULTS.pollMs;
    this.correlator = new Correlator(journal, { ...CORRELATOR_DEFAULTS, ...rest }, metrics);
  }

  get counts(): AuditCounts {
    return this.correlator.counts;
  }

  /** Parses and correlates lines of an audit log. */
  ingestLines(lines: readonly string[], source = "log"): void {
    const facts: AuditFacts[] = [];
    for (const line of lines) {
      const p = parseAuditLine(line, this.maxLineBytes);
      if (p.ok) facts.push(p.facts);
      else this.correlator.reject(p.reason, source);
    }
    this.correlator.ingest(facts, source);
  }

  /** Validates and correlates an EventList POSTed by the audit webhook backend. */
  ingestEventList(body: unknown): WebhookResult {
    const list = AuditEventListSchema.safeParse(body);
    if (!list.success) {
      this.correlator.reject("malformed", "webhook");
      return { accepted: 0, malformed: 1 };
    }
    const facts: AuditFacts[] = [];
    let malformed = 0;
    for (const item of list.data.items) {
      const p = parseAuditEvent(item);
      if (p.ok) facts.push(p.facts);
      else {
        malformed++;
        this.correlator.reject("malformed", "webhook");
      }
    }
    this.correlator.ingest(facts, "webhook");
    return { accepted: facts.length, malformed };
  }

  /** Reads a whole audit log once, then gives up on what stayed unmatched (an import). */
  async importFile(path: string): Promise<AuditCounts & { file: FollowStats }> {
    return this.importFiles([path]);
  }

  /**
   * Reads audit logs once each, oldest first (rotated backups, then the current file), and gives up
   * on what stayed unmatched only after the last: a request's stages may straddle a rotation.
   */
  async importFiles(paths: readonly string[]): Promise<AuditCounts & { file: FollowStats }> {
    const file: FollowStats = { lines: 0, huge: 0, bytes: 0, rotations: 0, truncations: 0 };
    for (const path of paths) {
      // Larger reads make larger batches: one journal commit per chunk of lines.
      const follower = new LogFollower(path, lines => this.ingestLines(lines), {
        maxLineBytes: this.maxLineBytes,
        pollMs: this.pollMs,
        chunkBytes: IMPORT_CHUNK_BYTES,
      });
      const s = await follower.readOnce();
      this.correlator.reject("huge", "log", s.huge);
      file.lines += s.lines;
      file.huge += s.huge;
      file.bytes += s.bytes;
    }
    this.correlator.finish();
    return { ...this.counts, file };
  }

  /**
   * Follows an audit log like `tail -F` until the signal aborts, retrying waiting events every
   * pollMs. The returned follower's stats count lines, huge lines and rotations as they happen.
   */
  follow(path: string, signal: AbortSignal): { follower: LogFollower; done: Promise<void> } {
    let hugeSeen = 0;
    let rotationsSeen = 0;
    // The follower counts huge lines and rotations as it reads; they become audit counts here.
    const sync = (): void => {
      const s = follower.stats;
      if (s.huge > hugeSeen) this.correlator.reject("huge", "log", s.huge - hugeSeen);
      hugeSeen = s.huge;
      if (s.rotations > rotationsSeen) this.metrics?.rotations.inc(s.rotations - rotationsSeen);
      rotationsSeen = s.rotations;
    };
    const follower: LogFollower = new LogFollower(
      path,
      lines => {
        this.ingestLines(lines);
        sync();
      },
      { maxLineBytes: this.maxLineBytes, pollMs: this.pollMs },
    );
    const timer = setInterval(() => {
      try {
        sync();
        this.correlator.retry();
      } catch (err) {
        log.error({ err }, "retrying waiting audit events failed");
      }
    }, this.pollMs);
    const done = follower.follow(signal).finally(() => {
      clearInterval(timer);
      sync();
    });
    return { follower, done };
  }
}
