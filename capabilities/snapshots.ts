import { Capability } from "pepr";
import { processRuntime } from "../src/runtime";

export const Snapshots = new Capability({
  name: "snapshots",
  description: "Takes a scheduled snapshot (per-stream watermarks) and keeps the newest N.",
});

/**
 * The schedule handed to Pepr; exported so tests can see exactly what is registered. Pepr needs its
 * start time now, so the schedule settings are read here; that never throws (see snapshotSchedule).
 */
export const snapshotSchedule = processRuntime().snapshotSchedule();

Snapshots.OnSchedule(snapshotSchedule);
