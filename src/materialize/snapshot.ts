import { snapshotRecord, type JournalRecord } from "../event";
import type { Journal, JournalView, ObjectIdentity, ObjectPosition, StreamInfo } from "../journal";
import { answer, coverageOf, type Answer } from "./answer";
import { coverageAt, streamsFor } from "./coverage";
import { materializedOf, parseTime } from "./provenance";
import type { MaterializedObject, Snapshot } from "./types";
import { warn } from "./warnings";
import { compareTimes } from "./order";

export interface SnapshotOptions {
  /** Leave objects out of the answer (the record only keeps watermarks anyway). */
  withoutObjects?: boolean;
  /** Rebuild only the objects this keeps (the count and watermarks still cover every object). */
  only?: (identity: ObjectIdentity) => boolean;
}

/**
 * Materializes every watched object of a cluster at a time, with each stream's watermark (its last
 * durable RV at or before then). Complete only when every stream has a baseline, no gap and coverage.
 * It only reads: recordSnapshot stores it.
 */
export function snapshot(
  view: JournalView,
  clusterId: string,
  at: string,
  name: string,
  opts: SnapshotOptions = {},
): Answer<Snapshot> {
  const atMs = parseTime(at, "snapshot time");
  const streams = streamsFor(view, clusterId);
  const streamIds = new Set(streams.map(s => s.streamId));
  if (opts.withoutObjects) {
    const { count, newest } = view.consistentRead(() =>
      foldPositions(view, clusterId, atMs, streamIds),
    );
    const cov = coverageAt(view, streams, atMs, newest);
    return assemble(view, clusterId, atMs, at, name, streams, newest, cov, opts, count);
  }
  const all = view.positionsAt(clusterId, atMs, { streamIds });
  const cov = coverageAt(view, streams, atMs, all);
  return assemble(view, clusterId, atMs, at, name, streams, all, cov, opts);
}

/**
 * Objects whose positions a snapshot without objects holds at once. Small enough that a page's rows
 * die in the young generation: with pages of 512 they outlived it, and each snapshot of 10k objects
 * left 13 MiB in the old generation of the sidecar's background thread (6 MiB with 64).
 */
const POSITION_PAGE = 64;

/**
 * What a snapshot without objects needs of every object's position, read a page of objects at a
 * time: how many exist, and each stream's newest position with an RV (its watermark, as
 * streamPositionAt picks it). Holding every position of a large cluster at once (each with its
 * row) was tens of MiB of heap on the sidecar's background thread.
 */
function foldPositions(
  view: JournalView,
  clusterId: string,
  atMs: number,
  streamIds: ReadonlySet<string>,
): { count: number; newest: ObjectPosition[] } {
  const newest = new Map<string, ObjectPosition>();
  let count = 0;
  for (let afterId: number | null = 0; afterId !== null; ) {
    const page = view.positionsPage(
      clusterId,
      atMs,
      { afterId, limit: POSITION_PAGE },
      { streamIds },
    );
    for (const p of page.positions) {
      if (p.exists) count++;
      if (p.resourceVersion === null) continue;
      const best = newest.get(p.streamId);
      if (!best || p.seq > best.seq) newest.set(p.streamId, p);
    }
    afterId = page.next;
  }
  return { count, newest: [...newest.values()] };
}

/** Gives the event loop a turn: what a sliced computation waits on between slices. */
export const nextTurn = (): Promise<void> => new Promise(resolve => setImmediate(resolve));

/**
 * The same answer as snapshot, computed a namespace (and a stream's coverage) at a time with a turn
 * of the event loop between slices, so a process that records while it snapshots keeps reading its
 * sockets. Pass a view of its own: reads between slices may see later appends, which only ever add
 * records after `at`.
 */
export async function snapshotInSlices(
  view: JournalView,
  clusterId: string,
  at: string,
  name: string,
  opts: SnapshotOptions = {},
  turn: () => Promise<void> = nextTurn,
): Promise<Answer<Snapshot>> {
  const atMs = parseTime(at, "snapshot time");
  const streams = streamsFor(view, clusterId);
  const streamIds = new Set(streams.map(s => s.streamId));
  // Positions per namespace: each slice reads only that namespace's identities.
  const namespaces = [...new Set(view.objects(clusterId).map(o => o.namespace))].sort();
  await turn();
  const all: ObjectPosition[] = [];
  for (const namespace of namespaces) {
    for (const p of view.positionsAt(clusterId, atMs, { streamIds, namespace })) {
      // positionsAt by namespace includes cluster-scoped objects only for the "" namespace.
      if (p.identity.namespace === namespace) all.push(p);
    }
    await turn();
  }
  // The order positionsAt gives for the whole cluster.
  all.sort(
    (a, b) =>
      cmp(a.identity.kind, b.identity.kind) ||
      cmp(a.identity.namespace, b.identity.namespace) ||
      cmp(a.identity.name, b.identity.name),
  );
  const parts: ReturnType<typeof coverageAt>[] = [];
  for (const s of streams) {
    parts.push(coverageAt(view, [s], atMs, all));
    await turn();
  }
  const cov = {
    streams: parts.flatMap(p => p.streams),
    gaps: parts.flatMap(p => p.gaps),
    downWindows: parts.flatMap(p => p.downWindows),
    unrecorded: parts.flatMap(p => p.unrecorded),
  };
  return assemble(view, clusterId, atMs, at, name, streams, all, cov, opts);
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function assemble(
  view: JournalView,
  clusterId: string,
  atMs: number,
  at: string,
  name: string,
  streams: readonly StreamInfo[],
  all: readonly ObjectPosition[],
  cov: ReturnType<typeof coverageAt>,
  opts: SnapshotOptions,
  /** Objects that exist, when `all` holds only what coverage needs (foldPositions). */
  existing?: number,
): Answer<Snapshot> {
  const warnings: string[] = [];
  const missing = cov.streams.filter(s => !s.complete).map(s => s.streamId);
  for (const s of cov.streams) for (const r of s.reasons) warnings.push(`${s.streamId}: ${r}`);
  if (streams.length === 0) warnings.push(warn.noStreams(clusterId));
  const horizon = view.prunedBefore();
  const pruned = horizon && atMs < Date.parse(horizon) ? horizon : null;
  if (pruned) {
    warnings.push(warn.prunedObjects(pruned, at));
    for (const s of cov.streams) if (!missing.includes(s.streamId)) missing.push(s.streamId);
  }
  const watermarks: Record<string, string> = {};
  for (const s of cov.streams) if (s.watermark !== null) watermarks[s.streamId] = s.watermark;

  const positions = existing === undefined ? all.filter(p => p.exists) : [];
  const wanted = opts.only ? positions.filter(p => opts.only!(p.identity)) : positions;
  const objects = opts.withoutObjects ? [] : view.records(wanted).map(materializedOf);
  const complete = missing.length === 0 && streams.length > 0;
  const data: Snapshot = {
    id: null,
    clusterId,
    name,
    at: new Date(atMs).toISOString(),
    complete,
    watermarks,
    streams: cov.streams,
    missing,
    warnings,
    objectCount: existing ?? positions.length,
    objects,
  };
  return answer(
    data,
    coverageOf(cov.gaps, pruned, complete, {
      downWindows: cov.downWindows,
      unrecorded: cov.unrecorded,
    }),
    warnings,
  );
}

/**
 * Stores a snapshot as a SNAPSHOT record (its watermarks and completeness, not its objects) and
 * returns it with the record's id. Reading and recording are separate calls, so a read never appends.
 */
export function recordSnapshot(journal: Journal, snap: Snapshot, now = new Date()): Snapshot {
  const rec = snapshotRecord(
    snap.clusterId,
    {
      name: snap.name,
      at: snap.at,
      complete: snap.complete,
      watermarks: snap.watermarks,
      missing: snap.missing,
      warnings: snap.warnings,
      objectCount: snap.objectCount,
    },
    now.toISOString(),
  );
  journal.append({ records: [rec], checkpoints: [] });
  return { ...snap, id: rec.eventId };
}

/** A stored snapshot as listed: its record id, when it was taken, and its payload. */
export interface SnapshotSummary {
  id: string;
  takenAt: string;
  clusterId: string;
  name: string;
  at: string;
  complete: boolean;
  missing: string[];
  warnings: string[];
  objectCount: number;
  watermarks: Record<string, string>;
}

function summaryOf(rec: JournalRecord): SnapshotSummary {
  const s = rec.snapshot!;
  return {
    id: rec.eventId,
    takenAt: rec.observedAt,
    clusterId: rec.clusterId,
    name: s.name,
    at: s.at,
    complete: s.complete,
    missing: s.missing,
    warnings: s.warnings,
    objectCount: s.objectCount,
    watermarks: s.watermarks,
  };
}

/** Stored snapshots, oldest first, optionally of one cluster. */
export function listSnapshots(view: JournalView, clusterId?: string): SnapshotSummary[] {
  return view
    .snapshots()
    .filter(r => r.snapshot && (clusterId === undefined || r.clusterId === clusterId))
    .map(summaryOf);
}

/** Stored snapshots as an answer: each incomplete one is named in the warnings. */
export function storedSnapshots(view: JournalView, clusterId?: string): Answer<SnapshotSummary[]> {
  const list = listSnapshots(view, clusterId);
  const incomplete = list.filter(s => !s.complete);
  return answer(
    list,
    coverageOf([], null, incomplete.length === 0),
    incomplete.map(s => warn.snapshotIncomplete(s.name, s.id, s.missing)),
  );
}

/** The objects of a stored snapshot, rebuilt from the journal at its time (optionally one namespace). */
export function snapshotObjects(
  view: JournalView,
  id: string,
  opts: { namespace?: string } = {},
): Answer<{ snapshot: SnapshotSummary; objects: MaterializedObject[] }> {
  const found = listSnapshots(view).find(s => s.id === id);
  if (!found) throw new Error(`no snapshot with id ${id}`);
  const atMs = Date.parse(found.at);
  const warnings = [...found.warnings];
  const pruned = view.prunedBefore();
  if (pruned && atMs < Date.parse(pruned)) {
    throw new Error(
      `snapshot ${found.name} (${id}) is at ${found.at}, before pruned history (${pruned})`,
    );
  }
  const streams = streamsFor(view, found.clusterId, opts.namespace);
  const streamIds = new Set(streams.map(s => s.streamId));
  const all = view.positionsAt(found.clusterId, atMs, { streamIds });
  for (const [streamId, rv] of Object.entries(found.watermarks)) {
    if (!streamIds.has(streamId)) continue;
    const now = view.streamPositionAt(streamId, atMs, all);
    if (now?.resourceVersion !== rv)
      warnings.push(warn.lateRecords(streamId, now?.resourceVersion ?? null, found.at, rv));
  }
  const objects = all
    .filter(p => p.exists)
    .filter(p => opts.namespace === undefined || p.identity.namespace === opts.namespace)
    .map(p => materializedOf(view.record(p)));
  const gaps = streams.flatMap(s => view.gapWindows(s.streamId, { fromMs: atMs, toMs: atMs }));
  const lateOrMissing = warnings.length > found.warnings.length || !found.complete;
  return answer({ snapshot: found, objects }, coverageOf(gaps, null, !lateOrMissing), warnings);
}

/** Which snapshots fall outside the newest `keep` (by the time they were taken). */
export function expiredSnapshots(list: SnapshotSummary[], keep: number): SnapshotSummary[] {
  if (!Number.isInteger(keep) || keep < 0)
    throw new Error(`keep must be a whole number, got ${keep}`);
  const sorted = [...list].sort((a, b) => compareTimes(a.takenAt, b.takenAt));
  return sorted.slice(0, Math.max(0, sorted.length - keep));
}
