// The questions the sidecar answers, as plain functions of a read-only view and a plain input. The
// same function runs on the main thread or in a pool worker, so inputs and outputs are plain data.
import { createHash } from "node:crypto";
import type { JournalRecord, RecordType } from "../event";
import { openJournal, type GapWindow, type Journal, type JournalView } from "../journal";
import type { AuditCounts, AuditIngestor } from "../audit";
import {
  answer,
  changesByActor,
  coverageAt,
  coverageOf,
  diff,
  journalStatus,
  objectAt,
  recordSnapshot,
  resolveCluster,
  resolveKind,
  searchPage,
  snapshot,
  snapshotObjects,
  storedSnapshots,
  streamReports,
  streamsFor,
  timeline,
  timelinePage,
  type Answer,
  type At,
  type SearchKey,
  type Coverage,
  type TimelineEntry,
} from "../materialize";
import { ApiError } from "./errors";
import {
  decodeHistoryCursor,
  encodeHistoryCursor,
  readCursor,
  writeCursor,
} from "./history-cursor";

/** An object named by a route: kind as typed (deploy, Deployment), name, namespace ("" if cluster-scoped). */
export interface RefInput {
  cluster?: string;
  kind: string;
  name: string;
  namespace: string;
  group?: string;
}

export interface EventFilters {
  cluster?: string;
  stream?: string;
  kind?: string;
  namespace?: string;
  name?: string;
  since?: string;
  until?: string;
  types?: RecordType[];
}

/** Audit webhook ingestors of this process, by journal path and cluster. */
const auditIngestors = new Map<string, AuditIngestor>();

/** What a query may need besides its view. */
export interface QueryContext {
  journalPath: string;
  busyTimeoutMs: number;
  now: () => number;
  /**
   * The writer for the sidecar's one write, a SNAPSHOT record. A pool worker opens it on its first
   * snapshot and keeps it (opening reads every event id into the dedup filter, seconds at 1M records);
   * without this, a writer is opened for the one append and closed.
   */
  writer?: () => Journal;
}

/** Opens a writer for the sidecar's rare appends: busy_timeout waits out the recorder's transactions. */
export function openSnapshotWriter(journalPath: string, busyTimeoutMs: number): Journal {
  // It appends one small record at a time, so neither the per-object cache nor the recorder's
  // 64 MiB page cache is kept: 512 KiB holds the pages an append walks (each index's newest).
  return openJournal(journalPath, { busyTimeoutMs, lastVersionCacheSize: 16, pageCacheKiB: 512 });
}

function cluster(view: JournalView, wanted: string | undefined): string {
  try {
    return resolveCluster(view, wanted);
  } catch (err) {
    const msg = (err as Error).message.replace("pass --cluster", "pass cluster=");
    throw new ApiError(/several clusters/.test(msg) ? "unanswerable" : "not_found", msg, [], {
      cause: err,
    });
  }
}

function kindOf(view: JournalView, clusterId: string, typed: string): string {
  try {
    return resolveKind(view, clusterId, typed);
  } catch (err) {
    throw new ApiError("not_found", (err as Error).message, [], { cause: err });
  }
}

/** Resolved (cluster, kind) pairs by view, for the journal state (changeMark) they were read at. */
const selectors = new WeakMap<
  JournalView,
  { mark: number; byRef: Map<string, { clusterId: string; kind: string }> }
>();
/** Distinct (cluster, kind) spellings kept between two changes of the journal. */
const SELECTORS_KEPT = 64;

/**
 * The cluster and recorded kind a ref names. Resolving reads every stream and every kind of the
 * cluster (a scan of the objects table, about 1 ms at 10k objects), so each spelling is resolved
 * once per journal state; an error is never kept, so a bad ref costs its full answer each time.
 */
function selectorOf(view: JournalView, ref: RefInput) {
  const mark = view.changeMark();
  let memo = selectors.get(view);
  if (!memo || memo.mark !== mark) {
    memo = { mark, byRef: new Map() };
    selectors.set(view, memo);
  }
  const key = `${ref.cluster ?? ""}\u0000${ref.kind}`;
  const held = memo.byRef.get(key);
  if (held) return held;
  const clusterId = cluster(view, ref.cluster);
  const found = { clusterId, kind: kindOf(view, clusterId, ref.kind) };
  if (memo.byRef.size >= SELECTORS_KEPT) memo.byRef.clear();
  memo.byRef.set(key, found);
  return found;
}

/** The filters in a fixed order, for keys. */
function filterKeyOf(f: EventFilters): unknown[] {
  return [f.cluster, f.stream, f.kind, f.namespace, f.name, f.since, f.until, f.types];
}

// A cursor is bound to the filters it was made for, so reusing it with others is an error, not a skip.
function filterKey(f: EventFilters): string {
  const key = JSON.stringify(filterKeyOf(f));
  return createHash("sha256").update(key).digest("base64url").slice(0, 12);
}

/** Envelopes of events answers by view, for the journal state (changeMark) they were read at. */
const envelopes = new WeakMap<
  JournalView,
  { mark: number; byFilters: Map<string, EventsEnvelope> }
>();
/** Distinct filters whose envelope is kept between two changes of the journal. */
const ENVELOPES_KEPT = 256;

/** Wraps the journal's cursor with the filters it belongs to. */
export function encodeCursor(journalCursor: string, f: EventFilters): string {
  return writeCursor({ j: journalCursor, f: filterKey(f) });
}

/** Unwraps a cursor made by encodeCursor for the same filters. */
export function decodeCursor(cursor: string, f: EventFilters): string {
  const c = readCursor(cursor) as { j?: unknown; f?: unknown } | null;
  if (!c || typeof c.j !== "string" || typeof c.f !== "string") {
    throw new ApiError("invalid_input", "invalid cursor", [
      { in: "query", path: "cursor", message: "not a cursor this server made" },
    ]);
  }
  if (c.f !== filterKey(f)) {
    throw new ApiError("invalid_input", "cursor belongs to other filters", [
      {
        in: "query",
        path: "cursor",
        message: "was made for different filters; start again without it",
      },
    ]);
  }
  return c.j;
}

function gapsFor(view: JournalView, f: EventFilters, nowMs: number): GapWindow[] {
  const during = {
    fromMs: f.since ? Date.parse(f.since) : 0,
    toMs: f.until ? Date.parse(f.until) : nowMs,
  };
  // One read of every gap overlapping the range (of the one stream asked for), not one per stream.
  const gaps = view.gapWindows(f.stream, during);
  if (f.cluster === undefined) return gaps;
  const inCluster = new Set(
    view
      .streams()
      .filter(s => s.key.clusterId === f.cluster)
      .map(s => s.streamId),
  );
  return gaps.filter(g => inCluster.has(g.streamId));
}

/** What an events answer says besides its page, with the filters resolved (cluster, kind). */
export interface EventsEnvelope {
  filters: EventFilters;
  coverage: Coverage;
  warnings: string[];
  /** The journal's removal count (JournalView.removals) when this was read. */
  removals: number;
}

function eventsEnvelope(
  view: JournalView,
  filters: EventFilters,
  ctx: QueryContext,
): EventsEnvelope {
  const f = { ...filters };
  if (f.cluster !== undefined) f.cluster = cluster(view, f.cluster);
  if (f.kind !== undefined) f.kind = kindOf(view, cluster(view, f.cluster), f.kind);
  const gaps = gapsFor(view, f, ctx.now());
  const horizon = view.prunedBefore();
  const pruned = horizon && (!f.since || f.since < horizon) ? horizon : null;
  return {
    filters: f,
    coverage: coverageOf(gaps, pruned),
    warnings:
      gaps.length > 0
        ? [`${gaps.length} gap(s) overlap the range; events in them are unknown`]
        : [],
    removals: view.removals(),
  };
}

function eventsPage(
  view: JournalView,
  f: EventFilters,
  limit: number,
  cursor: string | undefined,
  includeObjects: boolean,
): { records: JournalRecord[]; nextCursor: string | null } {
  const page = view.events({
    clusterId: f.cluster,
    streamId: f.stream,
    kind: f.kind,
    namespace: f.namespace,
    name: f.name,
    since: f.since,
    until: f.until,
    types: f.types,
    limit,
    cursor: cursor === undefined ? undefined : decodeCursor(cursor, f),
    includeObjects,
  });
  return {
    records: page.records,
    nextCursor: page.nextCursor === null ? null : encodeCursor(page.nextCursor, f),
  };
}

const iso = (ms: number) => new Date(ms).toISOString();

function history(
  view: JournalView,
  input: RefInput & { includeStatus: boolean },
): Answer<TimelineEntry[]> {
  const { clusterId, kind } = selectorOf(view, input);
  return timeline(
    view,
    clusterId,
    { kind, namespace: input.namespace, name: input.name, group: input.group },
    { includeStatus: input.includeStatus },
  );
}

/** One page of an object's timeline, oldest first, with cursors to the pages around it. */
function historyPage(view: JournalView, input: HistoryInput) {
  return pageOfHistory(view, historyQuestion(view, input), input);
}

type HistoryInput = RefInput & { includeStatus: boolean; limit: number; cursor?: string };

/** The object and the position a history page starts after: a 400 or 404 for bad input. */
function historyQuestion(view: JournalView, input: HistoryInput) {
  const { clusterId, kind } = selectorOf(view, input);
  const ref = { kind, namespace: input.namespace, name: input.name, group: input.group };
  const bound = { clusterId, ...ref };
  const after = input.cursor === undefined ? undefined : decodeHistoryCursor(input.cursor, bound);
  return { clusterId, ref, bound, after };
}

function pageOfHistory(
  view: JournalView,
  q: ReturnType<typeof historyQuestion>,
  input: HistoryInput,
) {
  const page = timelinePage(view, q.clusterId, q.ref, {
    includeStatus: input.includeStatus,
    limit: input.limit,
    after: q.after,
  });
  const { entries, next, previous, start, total } = page.data;
  const cursor = (at: number | null) => (at === null ? null : encodeHistoryCursor(at, q.bound));
  return answer(
    { entries, nextCursor: cursor(next), previousCursor: cursor(previous), start, total },
    page.coverage,
    page.warnings,
  );
}

/**
 * A history page as JSON text, with the streams it rests on and the journal's mark for them, read
 * in one transaction: a record written meanwhile makes the mark newer than nothing in the page.
 * The input is checked first, outside it, so a bad one is its own error, not a journal's.
 */
function historyMarked(view: JournalView, input: HistoryInput) {
  const q = historyQuestion(view, input);
  const { group, ...sel } = q.bound;
  return view.consistentRead(() => {
    const a = pageOfHistory(view, q, input);
    const streams = [...new Set(a.data.entries.map(e => e.streamId))].sort();
    const mark = view.objectMark(group ? { ...sel, group } : sel, streams);
    return { text: JSON.stringify(a), streams, mark };
  });
}

/** The journal's current mark for a cached history page (see historyMarked). */
function historyMark(view: JournalView, input: { ref: RefInput; streams: string[] }) {
  const { clusterId, kind } = selectorOf(view, input.ref);
  const sel = { clusterId, kind, namespace: input.ref.namespace, name: input.ref.name };
  return view.objectMark(input.ref.group ? { ...sel, group: input.ref.group } : sel, input.streams);
}

/** Every query by name. Each takes (view, input, context) and returns plain data. */
export const QUERIES = {
  clusters(view: JournalView, _input: Record<string, never>) {
    const report = streamReports(view);
    const byCluster = new Map<
      string,
      { clusterId: string; streams: number; openGaps: number; lastObservedAt: string | null }
    >();
    for (const s of report.data) {
      const c = byCluster.get(s.key.clusterId) ?? {
        clusterId: s.key.clusterId,
        streams: 0,
        openGaps: 0,
        lastObservedAt: null,
      };
      c.streams++;
      c.openGaps += s.openGaps;
      if (s.lastObservedAt && (!c.lastObservedAt || s.lastObservedAt > c.lastObservedAt))
        c.lastObservedAt = s.lastObservedAt;
      byCluster.set(s.key.clusterId, c);
    }
    return answer([...byCluster.values()], report.coverage, report.warnings);
  },

  status(view: JournalView, input: { cluster?: string }) {
    if (input.cluster !== undefined) cluster(view, input.cluster);
    return journalStatus(view, input.cluster);
  },

  streams(view: JournalView, input: { cluster?: string }, ctx: QueryContext) {
    if (input.cluster !== undefined) cluster(view, input.cluster);
    const report = streamReports(view, input.cluster);
    const now = ctx.now();
    // Every field the report holds passes through (down windows join it as the journal learns them).
    const data = report.data.map(s => ({
      ...s,
      lagSeconds: s.lastObservedAt
        ? Math.max(0, (now - Date.parse(s.lastObservedAt)) / 1000)
        : null,
    }));
    return answer(data, report.coverage, report.warnings);
  },

  coverage(
    view: JournalView,
    input: { cluster?: string; at?: string; namespace?: string },
    ctx: QueryContext,
  ) {
    const clusterId = cluster(view, input.cluster);
    const atMs = input.at ? Date.parse(input.at) : ctx.now();
    const streams = streamsFor(view, clusterId, input.namespace);
    const cov = coverageAt(view, streams, atMs);
    const warnings = cov.streams.flatMap(s => s.reasons.map(r => `${s.streamId}: ${r}`));
    const horizon = view.prunedBefore();
    const pruned = horizon && atMs < Date.parse(horizon) ? horizon : null;
    const complete = streams.length > 0 && cov.streams.every(s => s.complete);
    return answer(
      { clusterId, at: iso(atMs), streams: cov.streams },
      coverageOf(cov.gaps, pruned, complete),
      warnings,
    );
  },

  events(
    view: JournalView,
    input: { filters: EventFilters; limit: number; cursor?: string; objects: boolean },
    ctx: QueryContext,
  ) {
    const env = eventsEnvelope(view, input.filters, ctx);
    const page = eventsPage(view, env.filters, input.limit, input.cursor, input.objects);
    return answer(page, env.coverage, env.warnings);
  },

  /**
   * The coverage and warnings of an events answer, kept per filters until the journal changes: the
   * gaps, horizon and removals it reads move only with a commit. (The range ends now, but a gap
   * window always starts before the gap was recorded, so a later now adds no overlap.)
   */
  eventsEnvelope(view: JournalView, input: { filters: EventFilters }, ctx: QueryContext) {
    const mark = view.changeMark();
    let memo = envelopes.get(view);
    if (!memo || memo.mark !== mark) envelopes.set(view, (memo = { mark, byFilters: new Map() }));
    const key = JSON.stringify(filterKeyOf(input.filters));
    let env = memo.byFilters.get(key);
    if (!env) {
      env = eventsEnvelope(view, input.filters, ctx);
      if (memo.byFilters.size >= ENVELOPES_KEPT) memo.byFilters.clear();
      memo.byFilters.set(key, env);
    }
    return env;
  },

  /**
   * One events page as JSON text, for filters eventsEnvelope resolved. It is full when a record
   * follows it; the removal count is read first, so a removal during the read shows as a change.
   */
  eventsPageText(
    view: JournalView,
    input: { filters: EventFilters; limit: number; cursor?: string; objects: boolean },
  ) {
    const removals = view.removals();
    const page = eventsPage(view, input.filters, input.limit, input.cursor, input.objects);
    // Bytes, not a string: a page is over 100 KiB, and a string that large lives in V8's large
    // object space until a full collection, where a buffer's memory goes with its small wrapper.
    return { removals, full: page.nextCursor !== null, json: Buffer.from(JSON.stringify(page)) };
  },

  /** One page of an export: the same filters as events, records only. */
  exportPage(view: JournalView, input: { filters: EventFilters; limit: number; cursor?: string }) {
    return eventsPage(view, input.filters, input.limit, input.cursor, true);
  },

  /** Coverage of an export, computed before it streams. */
  exportCoverage(view: JournalView, input: { filters: EventFilters }, ctx: QueryContext) {
    const f = { ...input.filters };
    if (f.cluster !== undefined) f.cluster = cluster(view, f.cluster);
    if (f.kind !== undefined) f.kind = kindOf(view, cluster(view, f.cluster), f.kind);
    const gaps = gapsFor(view, f, ctx.now());
    return { filters: f, answer: answer(null, coverageOf(gaps, view.prunedBefore()), []) };
  },

  history: historyPage,
  historyMarked,
  historyMark,

  objectAt(view: JournalView, input: RefInput & { at: At }) {
    const { clusterId, kind } = selectorOf(view, input);
    return objectAt(
      view,
      clusterId,
      { kind, namespace: input.namespace, name: input.name, group: input.group },
      input.at,
    );
  },

  /** Who changed which field of an object, and when: the attributed changes of its timeline. */
  attribution(
    view: JournalView,
    input: RefInput & { path?: string; since?: string; until?: string; includeStatus: boolean },
  ) {
    const t = history(view, input);
    const rows = t.data
      .filter(e => e.kind === "version")
      .filter(e => !input.since || e.observedAt >= input.since)
      .filter(e => !input.until || e.observedAt <= input.until)
      .flatMap(e =>
        e.changes
          .filter(
            c =>
              !input.path ||
              c.path === input.path ||
              c.path.startsWith(`${input.path}.`) ||
              c.path.startsWith(`${input.path}[`),
          )
          .map(c => ({
            observedAt: e.observedAt,
            resourceVersion: e.resourceVersion,
            streamId: e.streamId,
            path: c.path,
            before: c.before,
            after: c.after,
            removed: c.removed === true,
            managers: c.managers,
          })),
      );
    return answer(rows, t.coverage, t.warnings);
  },

  diff(
    view: JournalView,
    input: {
      cluster?: string;
      before: string;
      after: string;
      namespace?: string;
      includeStatus: boolean;
    },
  ) {
    if (Date.parse(input.after) < Date.parse(input.before)) {
      throw new ApiError("invalid_input", "after is earlier than before", [
        { in: "query", path: "after", message: "must not be earlier than before" },
      ]);
    }
    const clusterId = cluster(view, input.cluster);
    return diff(view, clusterId, input.before, input.after, {
      namespace: input.namespace,
      includeStatus: input.includeStatus,
    });
  },

  search(
    view: JournalView,
    input: {
      cluster?: string;
      kind?: string;
      name: string;
      labels?: string;
      limit: number;
      after?: SearchKey;
    },
  ) {
    const clusterId = input.cluster === undefined ? undefined : cluster(view, input.cluster);
    const kind =
      input.kind === undefined ? undefined : kindOf(view, cluster(view, clusterId), input.kind);
    return searchPage(
      view,
      { clusterId, kind, namePrefix: input.name, labelSelector: input.labels },
      { limit: input.limit, after: input.after },
    );
  },

  storedSnapshots(view: JournalView, input: { cluster?: string }) {
    if (input.cluster !== undefined) cluster(view, input.cluster);
    return storedSnapshots(view, input.cluster);
  },

  snapshotObjects(view: JournalView, input: { id: string; namespace?: string }) {
    return snapshotObjects(view, input.id, { namespace: input.namespace });
  },

  /**
   * Materializes a snapshot with this view, then stores its SNAPSHOT record through the context's
   * writer (busy_timeout waits out the recorder's transactions).
   */
  takeSnapshot(
    view: JournalView,
    input: { cluster?: string; at?: string; name?: string; objects: boolean; record: boolean },
    ctx: QueryContext,
  ) {
    const clusterId = cluster(view, input.cluster);
    const at = input.at ?? iso(ctx.now());
    const name = input.name ?? `api-${at}`;
    const snap = snapshot(view, clusterId, at, name, { withoutObjects: !input.objects });
    if (!input.record) return snap;
    const journal = ctx.writer?.() ?? openSnapshotWriter(ctx.journalPath, ctx.busyTimeoutMs);
    try {
      const stored = recordSnapshot(journal, snap.data, new Date(ctx.now()));
      return { ...snap, data: stored };
    } finally {
      if (!ctx.writer) journal.close();
    }
  },

  /** Recorded changes in a window grouped by actor (krply who). */
  who(
    view: JournalView,
    input: { cluster?: string; namespace?: string; since: string; until?: string; limit: number },
  ) {
    return changesByActor(view, cluster(view, input.cluster), input);
  },

  /**
   * Correlates an EventList from the audit webhook backend. It runs on the main thread: its
   * ingestor (one per journal and cluster, with a writer kept open) holds the events still waiting
   * for their watch event, and looks them up again with every batch.
   */
  ingestAudit(view: JournalView, input: { cluster?: string; body: unknown }, ctx: QueryContext) {
    const clusterId = cluster(view, input.cluster);
    const key = `${ctx.journalPath}\u0000${clusterId}`;
    let ingestor = auditIngestors.get(key);
    if (!ingestor) {
      const journal = openJournal(ctx.journalPath, { busyTimeoutMs: ctx.busyTimeoutMs });
      // Loaded on the first audit batch, not at import: the audit module starts zod and
      // prom-client, 4-6 MiB of every pool worker's memory, and only the main thread ingests.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const audit = require("../audit") as typeof import("../audit");
      ingestor = new audit.AuditIngestor(journal, { clusterId, now: ctx.now });
      auditIngestors.set(key, ingestor);
    }
    ingestor.correlator.retry();
    const result = ingestor.ingestEventList(input.body);
    const counts: AuditCounts = { ...ingestor.counts };
    return { ...result, counts };
  },
} satisfies Record<string, (view: JournalView, input: never, ctx: QueryContext) => unknown>;

export type QueryName = keyof typeof QUERIES;
export type QueryInput<K extends QueryName> = Parameters<(typeof QUERIES)[K]>[1];
export type QueryOutput<K extends QueryName> = ReturnType<(typeof QUERIES)[K]>;

/** Runs one query by name. */
export function runQuery<K extends QueryName>(
  view: JournalView,
  name: K,
  input: QueryInput<K>,
  ctx: QueryContext,
): QueryOutput<K> {
  const fn = QUERIES[name] as (v: JournalView, i: unknown, c: QueryContext) => QueryOutput<K>;
  if (typeof fn !== "function") throw new ApiError("internal", `unknown query ${String(name)}`);
  return fn(view, input, ctx);
}

export type { Answer };
