import { z } from "zod";
import { openJournal, type Journal } from "../journal";
import { expiredSnapshots, listSnapshots, snapshot, type SnapshotSummary } from "./snapshot";

const EnvSchema = z.object({
  KRPLY_JOURNAL: z.string().min(1).default("/var/lib/krply/journal.db"),
  KRPLY_SNAPSHOT_KEEP: z.coerce.number().int().min(1).default(7),
  KRPLY_SNAPSHOT_EVERY_HOURS: z.coerce
    .number()
    .int()
    .min(1)
    .max(24 * 31)
    .default(24),
  KRPLY_SNAPSHOT_AT: z
    .string()
    .regex(/^([01]\d|2[0-3]):[0-5]\d$/, "KRPLY_SNAPSHOT_AT must be HH:MM (UTC)")
    .default("02:00"),
});

/** When and how the scheduled snapshot runs, read from the environment. */
export interface NightlyConfig {
  journalPath: string;
  keep: number;
  everyHours: number;
  /** The first run: the next KRPLY_SNAPSHOT_AT (UTC) after now. */
  startTime: Date;
}

/** Reads the snapshot schedule from env (zod-checked); Pepr has no day unit, so days are 24 hours. */
export function nightlyConfigFromEnv(
  env: Record<string, string | undefined>,
  now = new Date(),
): NightlyConfig {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    throw new Error(`invalid snapshot schedule configuration: ${parsed.error.message}`, {
      cause: parsed.error,
    });
  }
  const e = parsed.data;
  const [h, m] = e.KRPLY_SNAPSHOT_AT.split(":").map(Number);
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate(), h, m));
  if (start.getTime() <= now.getTime()) start.setUTCDate(start.getUTCDate() + 1);
  return {
    journalPath: e.KRPLY_JOURNAL,
    keep: e.KRPLY_SNAPSHOT_KEEP,
    everyHours: e.KRPLY_SNAPSHOT_EVERY_HOURS,
    startTime: start,
  };
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

/** Takes one snapshot per recorded cluster at `now`, then expires all but the newest `keep`. */
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
    const s = snapshot(journal, clusterId, stamp, `scheduled-${stamp.slice(0, 16)}`, {
      withoutObjects: true,
      now: () => now,
    });
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

/**
 * The scheduled job: snapshots and expires old snapshots. The journal takes one writer, so pass the
 * recorder's open journal when it runs in this process; otherwise the job opens (and closes) its own.
 */
export function scheduledSnapshotJob(
  cfg: NightlyConfig,
  now = new Date(),
  shared?: Journal | null,
): NightlyResult {
  if (shared) return runScheduledSnapshot(shared, cfg.keep, now);
  const journal = openJournal(cfg.journalPath);
  try {
    return runScheduledSnapshot(journal, cfg.keep, now);
  } finally {
    journal.close();
  }
}
