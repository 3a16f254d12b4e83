import type { GapWindow, JournalView } from "../journal";
import { actorOf, type Actor } from "./actor";
import { answer, coverageOf, type Answer } from "./answer";
import { attributeChanges } from "./attribution";
import { fieldDiff } from "./field-diff";
import { withoutServerFields } from "./normalize";
import type { AttributedChange } from "./types";
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
  changes: AttributedChange[];
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

/** Every recorded change of an object with RV, observed time, changed fields and their managers. */
export function timeline(
  view: JournalView,
  clusterId: string,
  ref: TimelineRef,
  opts: { includeStatus?: boolean } = {},
): Answer<TimelineEntry[]> {
  const sel = { clusterId, kind: ref.kind, namespace: ref.namespace, name: ref.name };
  const history = view.objectHistory(ref.group === undefined ? sel : { ...sel, group: ref.group });
  const warnings: string[] = [];
  const entries: TimelineEntry[] = [];
  let prev: Record<string, unknown> | undefined;
  let prevRaw: unknown;
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
    const changes = prev && !deleted ? attributeChanges(fieldDiff(prev, now), prevRaw, raw) : [];
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
  if (history.length === 0) {
    warnings.push(warn.neverRecorded(objectLabel(ref.kind, ref.namespace, ref.name)));
    return answer(entries, coverageOf([], null, false), warnings);
  }
  const first = Date.parse(history[0].observedAt);
  const gaps: GapWindow[] = [];
  for (const streamId of new Set(history.map(h => h.streamId))) {
    for (const g of view.gapWindows(streamId)) {
      if (g.toMs !== null && g.toMs < first) continue;
      gaps.push(g);
      warnings.push(describeGap(g));
      entries.push({
        kind: "gap",
        observedAt: new Date(g.fromMs).toISOString(),
        resourceVersion: null,
        watchType: null,
        recordType: "gap",
        synthetic: false,
        streamId,
        changes: [],
        manager: null,
        actor: null,
        note: `unknown until ${g.toMs === null ? "now" : new Date(g.toMs).toISOString()}: ${g.reason}`,
      });
    }
  }
  const pruned = view.prunedBefore();
  if (pruned) warnings.push(warn.prunedVersions(pruned));
  entries.sort((a, b) => compareTimes(a.observedAt, b.observedAt));
  return answer(entries, coverageOf(gaps, pruned), warnings);
}
