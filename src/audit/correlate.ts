import { auditCorrelationRecord, type AuditCorrelation, type JournalRecord } from "../event";
import type { ChangeKey, ChangeMatch, Journal } from "../journal";
import type { AuditFacts } from "./facts";
import type { AuditMetrics, AuditResult } from "./metrics";

export interface CorrelatorOptions {
  clusterId: string;
  /** Recorded events observed further than this from the audit time are not candidates. */
  windowMs: number;
  /** Candidate rows read per audit event at most. */
  pageSize: number;
  /** How long after its own time an unmatched audit event waits for its watch event. */
  pendingMs: number;
  /** Bound on waiting audit events; past it the oldest are given up as unmatched. */
  maxPending: number;
  /** Audit ids of matched requests remembered, so their other stages find the same change. */
  rememberedRequests?: number;
  now?: () => number;
}

export const CORRELATOR_DEFAULTS = {
  windowMs: 5 * 60_000,
  pageSize: 64,
  pendingMs: 60_000,
  maxPending: 50_000,
  rememberedRequests: 100_000,
};

/** Counts of everything the correlator was given, by outcome. */
export type AuditCounts = Record<AuditResult, number> & { written: number; pending: number };

/**
 * The stages of one request are written at most its duration apart, which kube-apiserver bounds
 * by --request-timeout (60 s by default) for every write.
 */
const STAGES_APART_MS = 60_000;

const WRITE_VERBS = new Set(["create", "update", "patch", "delete"]);

/** Records of one batch, written in one append. */
interface Outgoing {
  records: JournalRecord[];
  source: string | null;
}

interface Waiting {
  facts: AuditFacts;
  key: ChangeKey;
  deadline: number;
  source: string;
}

/** The record's actor fields: no body, no request URI, nothing but who and how. */
function correlationOf(f: AuditFacts): AuditCorrelation {
  const a: AuditCorrelation = {
    auditId: f.auditId,
    stage: f.stage,
    code: f.code,
    user: f.user,
    verb: f.verb,
    stageTimestamp: f.stageTimestamp,
  };
  if (f.groups.length > 0) a.groups = f.groups;
  if (f.impersonatedUser) a.impersonatedUser = f.impersonatedUser;
  if (f.userAgent !== undefined) a.userAgent = f.userAgent;
  if (f.sourceIPs.length > 0) a.sourceIPs = f.sourceIPs;
  return a;
}

/** A small insertion-ordered LRU by audit id. */
class Recent<V> {
  private readonly map = new Map<string, V>();
  constructor(private readonly capacity: number) {}
  get(k: string): V | undefined {
    return this.map.get(k);
  }
  set(k: string, v: V): void {
    this.map.delete(k);
    this.map.set(k, v);
    if (this.map.size > this.capacity) this.map.delete(this.map.keys().next().value as string);
  }
  delete(k: string): void {
    this.map.delete(k);
  }
  get size(): number {
    return this.map.size;
  }
  *entries(): IterableIterator<[string, V]> {
    yield* this.map.entries();
  }
}

/**
 * Matches audit events to recorded changes and writes one audit_correlation record per audit
 * stage through the journal's front door. A completed write is matched by its object and the
 * resourceVersion its response names (a delete, answered by a Status, by the object's uid). Stages
 * before the response name no version, so they follow their request's completed stage by audit id.
 * An event whose change is not recorded yet waits (bounded in time and number) and is retried, so
 * an audit event that arrives before its watch event correlates as well as one that arrives after.
 */
export class Correlator {
  readonly counts: AuditCounts = {
    matched: 0,
    malformed: 0,
    huge: 0,
    ignored: 0,
    unmatched: 0,
    duplicate: 0,
    written: 0,
    pending: 0,
  };
  private waiting: Waiting[] = [];
  /** Matched requests by audit id. */
  private readonly done: Recent<ChangeMatch>;
  /** Stages before the response, waiting for their request's completed stage. */
  private readonly early: Recent<{ facts: AuditFacts[]; deadline: number; source: string }>;
  private readonly opts: Required<CorrelatorOptions>;

  constructor(
    private readonly journal: Journal,
    options: CorrelatorOptions,
    private readonly metrics?: AuditMetrics,
  ) {
    this.opts = {
      rememberedRequests: CORRELATOR_DEFAULTS.rememberedRequests,
      now: Date.now,
      ...options,
    };
    this.done = new Recent(this.opts.rememberedRequests);
    this.early = new Recent(this.opts.maxPending);
  }

  /** Counts an event that never reached the correlator (a malformed or huge line). */
  reject(result: "malformed" | "huge", source: string, n = 1): void {
    this.count(result, source, n);
  }

  private count(result: AuditResult, source: string, n = 1): void {
    this.counts[result] += n;
    this.metrics?.lines.inc({ source, result }, n);
  }

  /** The journal key of a completed write, or null when the event describes no recorded change. */
  private keyOf(f: AuditFacts): ChangeKey | null {
    if (!WRITE_VERBS.has(f.verb) || !f.resource || !f.name) return null;
    if (f.code < 200 || f.code >= 300) return null;
    if (f.resourceVersion === "" && !(f.verb === "delete" && f.uid !== "")) return null;
    const key: ChangeKey = {
      clusterId: this.opts.clusterId,
      group: f.group,
      resource: f.resource,
      namespace: f.namespace,
      name: f.name,
      uid: f.uid,
      resourceVersion: f.resourceVersion === "" ? null : f.resourceVersion,
      atMs: f.atMs,
    };
    if (f.kind) key.kind = f.kind;
    return key;
  }

  /** Correlates a batch of audit events and writes what matched in one append. */
  ingest(batch: readonly AuditFacts[], source = "log"): void {
    const out: Outgoing = { records: [], source: null };
    const lookups: Waiting[] = [];
    const now = this.opts.now();
    for (const f of batch) {
      if (f.stage === "RequestReceived" || f.stage === "ResponseStarted") {
        if (!WRITE_VERBS.has(f.verb) || !f.resource) {
          this.count("ignored", source);
          continue;
        }
        const m = this.done.get(f.auditId);
        if (m) {
          this.emit(out, m, f, source);
          continue;
        }
        const parked = this.early.get(f.auditId);
        if (parked) parked.facts.push(f);
        else
          this.early.set(f.auditId, {
            facts: [f],
            // Measured from arrival, not audit time: an old log read now still brings the
            // request's completed stage a few lines later.
            deadline: now + Math.max(this.opts.pendingMs, STAGES_APART_MS),
            source,
          });
        continue;
      }
      const key = this.keyOf(f);
      if (!key) {
        this.count("ignored", source);
        this.dropEarly(f.auditId, "ignored");
        continue;
      }
      lookups.push({ facts: f, key, deadline: f.atMs + this.opts.pendingMs, source });
    }
    this.lookUp(lookups, out, now);
    this.expireEarly(now);
    this.write(out);
  }

  /** Looks waiting events up again; call it periodically while following. */
  retry(): void {
    if (this.waiting.length === 0 && this.early.size === 0) return;
    const now = this.opts.now();
    const again = this.waiting;
    this.waiting = [];
    const out: Outgoing = { records: [], source: null };
    this.lookUp(again, out, now);
    this.expireEarly(now);
    this.write(out);
  }

  /** Gives up every waiting event now (end of a one-shot import). */
  finish(): void {
    this.retry();
    for (const w of this.waiting) this.count("unmatched", w.source);
    this.waiting = [];
    for (const [, e] of this.early.entries()) this.count("unmatched", e.source, e.facts.length);
    for (const [id] of [...this.early.entries()]) this.early.delete(id);
    this.updatePending();
  }

  private lookUp(items: Waiting[], out: Outgoing, now: number): void {
    if (items.length === 0) return;
    const matches = this.journal.findChanges(
      items.map(w => w.key),
      { windowMs: this.opts.windowMs, pageSize: this.opts.pageSize },
    );
    for (let i = 0; i < items.length; i++) {
      const w = items[i];
      const m = matches[i];
      if (m) {
        this.done.set(w.facts.auditId, m);
        this.emit(out, m, w.facts, w.source);
        const parked = this.early.get(w.facts.auditId);
        if (parked) {
          this.early.delete(w.facts.auditId);
          for (const f of parked.facts) this.emit(out, m, f, parked.source);
        }
      } else if (w.deadline > now) {
        this.waiting.push(w);
      } else {
        this.count("unmatched", w.source);
        this.dropEarly(w.facts.auditId, "unmatched");
      }
    }
    if (this.waiting.length > this.opts.maxPending) {
      const over = this.waiting.length - this.opts.maxPending;
      for (const w of this.waiting.slice(0, over)) this.count("unmatched", w.source);
      this.waiting = this.waiting.slice(over);
    }
  }

  private dropEarly(auditId: string, result: "ignored" | "unmatched"): void {
    const parked = this.early.get(auditId);
    if (!parked) return;
    this.early.delete(auditId);
    this.count(result, parked.source, parked.facts.length);
  }

  private expireEarly(now: number): void {
    for (const [id, e] of [...this.early.entries()]) {
      if (e.deadline > now) break; // insertion order is roughly time order
      this.early.delete(id);
      this.count("unmatched", e.source, e.facts.length);
    }
  }

  private emit(out: Outgoing, m: ChangeMatch, f: AuditFacts, source: string): void {
    out.records.push(
      auditCorrelationRecord(m.streamId, m.clusterId, m.resource, correlationOf(f), m.observedAt),
    );
    out.source = out.source === null || out.source === source ? source : "mixed";
  }

  private write(out: Outgoing): void {
    this.updatePending();
    if (out.records.length === 0) return;
    const r = this.journal.append({ records: out.records, checkpoints: [] });
    const source = out.source ?? "log";
    this.counts.written += r.appended;
    this.count("matched", source, r.appended);
    // Matched before (the same log read again): the journal already holds these records.
    if (r.duplicates > 0) this.count("duplicate", source, r.duplicates);
  }

  private updatePending(): void {
    this.counts.pending = this.waiting.length + this.early.size;
    this.metrics?.pending.set(this.counts.pending);
  }
}
