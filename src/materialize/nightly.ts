import type { SnapshotSettings } from "../config";
import type { Journal } from "../journal";
import {
  expiredSnapshots,
  listSnapshots,
  recordSnapshot,
  snapshot,
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
