import type { SnapshotSettings } from "../config";
import type { Journal, JournalView } from "../journal";
import {
  expiredSnapshots,
  listSnapshots,
  nextTurn,
  recordSnapshot,
  snapshot,
  snapshotInSlices,
  type SnapshotSummary,
} from "./snapshot";

/** When the scheduled snapshot runs and how many it keeps. */
export interface NightlyConfig {
  keep: number;
  everyHours: number;
  /** The first run: the next snapshot time of day (UTC) after now. */
  startTime: Date;
}

/** The schedule from the snapshot settings. Pepr has no day unit, so days are 24 hours. */
export function nightlyConfigOf(settings: SnapshotSettings, now = new Date()): NightlyConfig {
  const { hour, minute } = settings.at;
  const start = new Date(
    Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate(), hour, minute),
  );
  if (start.getTime() <= now.getTime()) start.setUTCDate(start.getUTCDate() + 1);
  return { keep: settings.keep, everyHours: settings.everyHours, startTime: start };
}

/** What one scheduled run did. */
export interface NightlyResult {
  taken: { clusterId: string; id: string | null; complete: boolean; missing: string[] }[];
  /** Snapshots beyond the newest `keep`. */
  expired: SnapshotSummary[];
  /** How many expired records were deleted. */
  deleted: number;
  warnings: string[];
}

/**
 * Takes one snapshot per recorded cluster at `now`, then expires all but the newest `keep`. The journal
 * takes one writer, so in the cluster this is the recorder's open journal.
 */
export function runScheduledSnapshot(
  journal: Journal,
  keep: number,
  now = new Date(),
): NightlyResult {
  const clusters = [...new Set(journal.streams().map(s => s.key.clusterId))].sort();
  const warnings: string[] = [];
  if (clusters.length === 0) warnings.push("no streams recorded yet; nothing to snapshot");
  const stamp = now.toISOString();
  const taken = clusters.map(clusterId => {
    const s = recordSnapshot(
      journal,
      snapshot(journal, clusterId, stamp, `scheduled-${stamp.slice(0, 16)}`, {
        withoutObjects: true,
      }).data,
      now,
    );
    if (!s.complete)
      warnings.push(`snapshot of ${clusterId} is incomplete: missing ${s.missing.join(", ")}`);
    return { clusterId, id: s.id, complete: s.complete, missing: s.missing };
  });
  const expired = clusters.flatMap(c => expiredSnapshots(listSnapshots(journal, c), keep));
  const deleted = expired.length > 0 ? journal.deleteSnapshots(expired.map(s => s.id)) : 0;
  if (deleted < expired.length)
    warnings.push(`${expired.length - deleted} expired snapshot(s) were already gone`);
  return { taken, expired, deleted, warnings };
}

/** Names of scheduled snapshots start with this; manual ones do not count for the schedule. */
export const SCHEDULED_PREFIX = "scheduled-";

/** When the newest scheduled snapshot was taken, or null when none was. */
export function newestScheduled(view: JournalView): Date | null {
  const taken = listSnapshots(view)
    .filter(s => s.name.startsWith(SCHEDULED_PREFIX))
    .map(s => Date.parse(s.takenAt))
    .filter(ms => !Number.isNaN(ms));
  return taken.length > 0 ? new Date(Math.max(...taken)) : null;
}

/**
 * Whether a start must take a catch-up snapshot: Pepr's schedule first runs one interval after the
 * pod starts, so without one a pod that restarts more often than that never snapshots. Due when no
 * scheduled snapshot exists or the newest is at least one interval old.
 */
export function catchUpDue(newest: Date | null, everyHours: number, now = new Date()): boolean {
  if (!newest) return true;
  return now.getTime() - newest.getTime() >= everyHours * 3_600_000;
}

/**
 * runScheduledSnapshot for a process that records meanwhile: every read goes through `view` (a
 * read-only connection of its own) in slices with a turn of the event loop between them, and only
 * the small SNAPSHOT records and the expiry go through the writer.
 */
export async function runScheduledSnapshotInSlices(
  journal: Journal,
  view: JournalView,
  keep: number,
  now = new Date(),
  turn: () => Promise<void> = nextTurn,
): Promise<NightlyResult> {
  const clusters = [...new Set(view.streams().map(s => s.key.clusterId))].sort();
  const warnings: string[] = [];
  if (clusters.length === 0) warnings.push("no streams recorded yet; nothing to snapshot");
  const stamp = now.toISOString();
  const taken: NightlyResult["taken"] = [];
  for (const clusterId of clusters) {
    const snap = await snapshotInSlices(
      view,
      clusterId,
      stamp,
      `${SCHEDULED_PREFIX}${stamp.slice(0, 16)}`,
      { withoutObjects: true },
      turn,
    );
    const s = recordSnapshot(journal, snap.data, now);
    if (!s.complete)
      warnings.push(`snapshot of ${clusterId} is incomplete: missing ${s.missing.join(", ")}`);
    taken.push({ clusterId, id: s.id, complete: s.complete, missing: s.missing });
    await turn();
  }
  const expired = clusters.flatMap(c => expiredSnapshots(listSnapshots(journal, c), keep));
  const deleted = expired.length > 0 ? journal.deleteSnapshots(expired.map(s => s.id)) : 0;
  if (deleted < expired.length)
    warnings.push(`${expired.length - deleted} expired snapshot(s) were already gone`);
  return { taken, expired, deleted, warnings };
}
