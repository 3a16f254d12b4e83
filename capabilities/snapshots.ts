import { Capability, Log } from "pepr";
import { nightlyConfigFromEnv, scheduledSnapshotJob } from "../src/materialize/nightly";
import { recorder } from "./recorder";

export const Snapshots = new Capability({
  name: "snapshots",
  description: "Takes a scheduled snapshot (per-stream watermarks) and keeps the newest N.",
});

const cfg = nightlyConfigFromEnv(process.env);

/** The schedule handed to Pepr; exported so tests can see exactly what is registered. */
export const snapshotSchedule = {
  name: "krply-scheduled-snapshot",
  every: cfg.everyHours,
  unit: "hours" as const,
  startTime: cfg.startTime,
  // Pepr calls run() without awaiting it, so nothing may escape: every failure is logged here.
  run: (): void => {
    try {
      // The journal has a single writer: reuse the recorder's connection when it is open here.
      const r = scheduledSnapshotJob(cfg, new Date(), recorder?.openJournal);
      for (const w of r.warnings) Log.warn({ warning: w }, "krply scheduled snapshot");
      Log.info(
        { taken: r.taken, expired: r.expired.length, deleted: r.deleted },
        "krply scheduled snapshot done",
      );
    } catch (err) {
      Log.error({ err }, "krply scheduled snapshot failed");
    }
  },
};

Snapshots.OnSchedule(snapshotSchedule);
