import type { JournalRecord } from "../event";
import type { DownWindow, GapWindow, JournalView } from "../journal";
import { actorOf, type Actor } from "./actor";
import { answer, coverageOf, type Answer } from "./answer";
import { attributeTimelineChanges } from "./attribution";
import { fieldDiff } from "./field-diff";
import { withoutServerFields } from "./normalize";
import type { TimelineChange } from "./types";
import { describeGap, objectLabel, warn } from "./warnings";
import { compareTimes } from "./order";

/** One entry of an object's timeline: a recorded version, or a gap in its stream. */
export interface TimelineEntry {
  kind: "version" | "gap";
  observedAt: string;
  resourceVersion: string | null;
  watchType: string | null;
  recordType: string;
  synthetic: boolean;
  streamId: string;
  /** Spec/metadata fields that changed from the previous version (server metadata ignored). */
  changes: TimelineChange[];
  /** The manager shown for the entry: the owner of the first change, if any. */
  manager: string | null;
  /** Who made the change: the audit log's user when correlated, else managedFields; null for a gap. */
  actor: Actor | null;
  note: string | null;
}

export interface TimelineRef {
  kind: string;
  namespace: string;
  name: string;
  group?: string;
}

/** One page of an object's timeline, oldest first. */
export interface TimelinePage {
  /** The page's versions, with the gaps that start in its span as entries of their own. */
  entries: TimelineEntry[];
  /** The position (ingest seq) the next page starts after, or null on the last page. */
  next: number | null;
  /** The position the previous page starts after (0: the first page), or null on the first page. */
  previous: number | null;
  /** How many of the object's versions come before this page. */
  start: number;
  /** The object's stored versions in all; gap entries come on top. */
  total: number;
}

export interface TimelineOptions {
  includeStatus?: boolean;
  /** Start after this position (a page's `next`); the first page when left out. */
  after?: number;
  /** Versions per page; every version when left out. */
  limit?: number;
}

/** Every recorded change of an object with RV, observed time, changed fields and their managers. */
export function timeline(
  view: JournalView,
  clusterId: string,
  ref: TimelineRef,
  opts: { includeStatus?: boolean } = {},
): Answer<TimelineEntry[]> {
  const page = timelinePage(view, clusterId, ref, opts);
  return answer(page.data.entries, page.coverage, page.warnings);
}

// The index of the first position after `after` in ascending seqs.
function startAfter(seqs: readonly number[], after: number): number {
  let lo = 0;
  let hi = seqs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (seqs[mid] <= after) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * One page of an object's timeline: only the page's versions are read and decoded, plus the one
 * before it, which the first entry's field diff and note compare against. The page spans the time
 * after the version before it up to its last version (the first page from the object's first
 * record, the last page on to now): gap entries that start in that span are placed among its
 * versions, and its coverage and warnings name the gaps and down windows that touch the span, and
 * (first page only) the retention horizon. Pages laid end to end give the whole timeline.
 */
export function timelinePage(
  view: JournalView,
  clusterId: string,
  ref: TimelineRef,
  opts: TimelineOptions = {},
): Answer<TimelinePage> {
  const base = { clusterId, kind: ref.kind, namespace: ref.namespace, name: ref.name };
  const sel = ref.group === undefined ? base : { ...base, group: ref.group };
  const seqs = view.objectVersionSeqs(sel);
  if (seqs.length === 0) {
    const none = { entries: [], next: null, previous: null, start: 0, total: 0 };
    return answer(none, coverageOf([], null, false), [
      warn.neverRecorded(objectLabel(ref.kind, ref.namespace, ref.name)),
    ]);
  }
  const limit = opts.limit ?? seqs.length;
  const start = opts.after === undefined ? 0 : startAfter(seqs, opts.after);
  const end = Math.min(seqs.length, start + limit);
  const records =
    end > start ? view.objectVersionsBetween(sel, seqs[Math.max(0, start - 1)], seqs[end - 1]) : [];
  const before =
    start > 0
      ? end > start
        ? records.shift()
        : view.objectVersionsBetween(sel, seqs[start - 1], seqs[start - 1])[0]
      : undefined;
  const entries = versionEntries(view, records, previousOf(view, sel, seqs, start, before), opts);
  const warnings: string[] = [];
  // The span: after the version before the page (the first page: from the object's first record)
  // up to the page's last version (the last page: on to now).
  const fromMs = before ? Date.parse(before.observedAt) : Date.parse(records[0].observedAt);
  const toMs = end < seqs.length ? Date.parse(records[records.length - 1].observedAt) : Infinity;
  const gaps: GapWindow[] = [];
  const down: DownWindow[] = [];
  for (const streamId of new Set([...records, ...(before ? [before] : [])].map(h => h.streamId))) {
    for (const g of view.gapWindows(streamId)) {
      const placed = (before ? g.fromMs > fromMs : true) && g.fromMs <= toMs;
      if (!placed && !overlaps(g, fromMs, toMs)) continue;
      if (!before && g.toMs !== null && g.toMs < fromMs) continue;
      gaps.push(g);
      warnings.push(describeGap(g));
      if (placed) entries.push(gapEntry(g));
    }
    down.push(...view.downWindows(streamId, { fromMs, toMs }));
  }
  const pruned = start === 0 ? view.prunedBefore() : null;
  if (pruned) warnings.push(warn.prunedVersions(pruned));
  entries.sort((a, b) => compareTimes(a.observedAt, b.observedAt));
  const previous = start === 0 ? null : start <= limit ? 0 : seqs[start - limit - 1];
  return answer(
    {
      entries,
      next: end < seqs.length ? seqs[end - 1] : null,
      previous,
      start: Math.min(start, seqs.length),
      total: seqs.length,
    },
    coverageOf(gaps, pruned, true, { downWindows: down }),
    warnings,
  );
}

const overlaps = (g: GapWindow, fromMs: number, toMs: number): boolean =>
  g.fromMs < toMs && (g.toMs === null || g.toMs > fromMs);

/**
 * The version the page's first entry is compared with: the nearest one before the page that holds
 * an object (a stored record without one is skipped, as the whole timeline skips it); none after a
 * delete or on the first page.
 */
function previousOf(
  view: JournalView,
  sel: Parameters<JournalView["objectVersionSeqs"]>[0],
  seqs: readonly number[],
  start: number,
  before: JournalRecord | undefined,
): JournalRecord | undefined {
  let rec = before;
  for (let k = start - 2; rec && !rec.object && k >= 0; k--)
    rec = view.objectVersionsBetween(sel, seqs[k], seqs[k])[0];
  return rec?.object && rec.watchType !== "DELETED" ? rec : undefined;
}

function versionEntries(
  view: JournalView,
  history: JournalRecord[],
  before: JournalRecord | undefined,
  opts: { includeStatus?: boolean },
): TimelineEntry[] {
  const entries: TimelineEntry[] = [];
  let prevRaw: unknown = before?.object;
  let prev = before
    ? withoutServerFields(before.object as Record<string, unknown>, opts)
    : undefined;
  const audits = view.auditCorrelations(
    history.map(h => ({
      streamId: h.streamId,
      observedAt: h.observedAt,
      resourceVersion: h.resource?.resourceVersion ?? "",
      uid: h.resource?.uid,
    })),
  );
  for (const [i, rec] of history.entries()) {
    if (!rec.object) continue;
    const raw = rec.object as Record<string, unknown>;
    const now = withoutServerFields(raw, opts);
    const deleted = rec.watchType === "DELETED";
    const changes =
      prev && !deleted ? attributeTimelineChanges(fieldDiff(prev, now), prevRaw, raw) : [];
    const first = changes.find(c => c.managers.length > 0)?.managers[0];
    let note: string | null = null;
    if (deleted) note = "deleted";
    else if (!prev) note = rec.synthetic ? "first seen in a list" : "created";
    else if (changes.length === 0)
      note = rec.synthetic ? "relisted, unchanged" : "no spec/metadata change";
    entries.push({
      kind: "version",
      observedAt: rec.observedAt,
      resourceVersion: rec.resource?.resourceVersion ?? null,
      watchType: rec.watchType ?? null,
      recordType: rec.type,
      synthetic: rec.synthetic,
      streamId: rec.streamId,
      changes,
      manager: first
        ? `${first.manager} (${first.operation}${first.time ? ` ${first.time}` : ""})`
        : null,
      note,
      // A relisted version is no change by anyone; its writer is still the one managedFields name.
      actor: actorOf(rec, prevRaw, audits[i]),
    });
    prev = deleted ? undefined : now;
    prevRaw = deleted ? undefined : raw;
  }
  return entries;
}

function gapEntry(g: GapWindow): TimelineEntry {
  return {
    kind: "gap",
    observedAt: new Date(g.fromMs).toISOString(),
    resourceVersion: null,
    watchType: null,
    recordType: "gap",
    synthetic: false,
    streamId: g.streamId,
    changes: [],
    manager: null,
    actor: null,
    note: `unknown until ${g.toMs === null ? "now" : new Date(g.toMs).toISOString()}: ${g.reason}`,
  };
}
