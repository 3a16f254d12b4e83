// The wording of every warning krply shows people. The journal reports facts (windows, absences,
// horizons); this file alone turns them into sentences.
import type { Absence, CoverageState, DownWindow, GapWindow } from "../journal";

const iso = (ms: number): string => new Date(ms).toISOString();

/** "kind ns/name", or "kind name" for a cluster-scoped object. */
export function objectLabel(kind: string, namespace: string, name: string): string {
  return `${kind} ${namespace ? `${namespace}/` : ""}${name}`;
}

/** A gap window for a warning. */
export function describeGap(g: GapWindow): string {
  const to = g.toMs === null ? "now (unresolved)" : iso(g.toMs);
  return `stream ${g.streamId} has a gap from ${iso(g.fromMs)} to ${to} (${g.reason}); changes in it are unknown`;
}

/** The sentence every answer at a time inside a down window carries. */
export const OBSERVED_LATE =
  "changes in this window were observed late; the times shown are not the times of change";

/** A recorder down window for a warning. */
export function describeDownWindow(w: DownWindow): string {
  return `stream ${w.streamId}: the recorder was down from ${iso(w.fromMs)} to ${iso(w.toMs)}; ${OBSERVED_LATE}`;
}

/** A stream that was not being recorded at a point. */
export function describeUnrecorded(streamId: string, c: CoverageState): string {
  return c.state === "stopped"
    ? `stream ${streamId} was not being recorded then (stopped: ${c.reason}); what it shows may be stale`
    : `stream ${streamId} was not recordable then (${c.reason}); what it shows may be stale`;
}

/** Why an object that had been recorded did not exist at a point. */
export function describeAbsence(label: string, a: Absence): string {
  return a.reason === "deleted"
    ? `${label} was deleted at ${iso(a.atMs)} (resourceVersion ${a.resourceVersion ?? "?"})`
    : `${label} was absent from the baseline listed at ${iso(a.atMs)}; it was deleted during a gap`;
}

export const warn = {
  pruned: (horizon: string) => `history before ${horizon} was pruned; the answer may be incomplete`,
  prunedObjects: (horizon: string, at: string) =>
    `history before ${horizon} was pruned; objects at ${at} cannot be rebuilt`,
  prunedEarlierSide: (horizon: string) =>
    `history before ${horizon} was pruned; the earlier side may be incomplete`,
  prunedVersions: (horizon: string) =>
    `history before ${horizon} was pruned; earlier versions are gone`,
  prunedExistence: (horizon: string) =>
    `history before ${horizon} was pruned; earlier existence is not shown`,
  prunedByRetention: (horizon: string) => `history before ${horizon} was pruned by retention`,
  rvNotRecorded: (rv: string, streamId: string) =>
    `resourceVersion ${rv} was never recorded on stream ${streamId}`,
  severalGroups: (label: string, n: number) =>
    `${label} matches ${n} API groups; pass group to choose one`,
  lastKnownBeforeGap: () =>
    "the object shown is the last version known before the gap; it may have changed",
  neverRecordedAt: (label: string) => `no record of ${label} at or before that point`,
  neverRecorded: (label: string) => `no record of ${label}`,
  noStreams: (clusterId: string) => `cluster ${clusterId} has no recorded streams`,
  nothingRecordedAt: (at: string) => `nothing recorded at or before ${at}`,
  noBaselineAt: (at: string) => `no baseline (complete list) at or before ${at}`,
  notRecordable: (reason: string) => `not recordable: ${reason}`,
  stoppedRecording: (reason: string) => `not recorded: stopped (${reason})`,
  lastKnownBeforeStop: () =>
    "the object shown is the last version recorded before its stream stopped; it may be stale",
  rangesUncertain: () =>
    "some ranges overlap gaps: the object may have come or gone unseen inside them",
  noBaselineYet: (streamId: string) =>
    `stream ${streamId} has no baseline yet; its history is partial`,
  unavailable: (streamId: string) => `stream ${streamId} is unavailable (not recordable)`,
  stopped: (streamId: string) => `stream ${streamId} is stopped`,
  nothingCovered: () => "no streams recorded: nothing is covered",
  lateRecords: (streamId: string, now: string | null, at: string, rv: string) =>
    `stream ${streamId} now ends at ${now ?? "nothing"} for ${at}, not at the snapshot's watermark ${rv}; records arrived late`,
  snapshotIncomplete: (name: string, id: string, missing: string[]) =>
    `snapshot ${name} (${id}) is incomplete: missing ${missing.join(", ")}`,
  truncated: (limit: number) => `only the first ${limit} changes were read; narrow the window`,
};
