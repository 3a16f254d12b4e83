import type { JournalRecord } from "../event";
import type { Attribution } from "./attribution";
import type { FieldChange } from "./field-diff";

/** A point in history: a time (collector clock), or a resourceVersion of one stream. */
export type At = { time: string } | { resourceVersion: string; streamId?: string };

/** Where an answer came from: the record that carried the object. */
export interface Provenance {
  streamId: string;
  eventId: string;
  ingestSeq: number | null;
  recordType: JournalRecord["type"];
  watchType: JournalRecord["watchType"] | null;
  synthetic: boolean;
  resourceVersion: string;
  observedAt: string;
  source: string | null;
}

/** One object as it stood at a point. */
export interface MaterializedObject {
  kind: string;
  group: string;
  namespace: string;
  name: string;
  object: Record<string, unknown>;
  provenance: Provenance;
}

/** The state of one stream at a point: its watermark and whether it can be trusted. */
export interface StreamCoverage {
  streamId: string;
  /** Last durable RV of the stream at or before the point; null when none was recorded yet. */
  watermark: string | null;
  watermarkObservedAt: string | null;
  baselinePresent: boolean;
  unresolvedGap: boolean;
  available: boolean;
  complete: boolean;
  reasons: string[];
}

/** A materialized snapshot: every watched object at a time plus per-stream watermarks. */
export interface Snapshot {
  id: string | null;
  clusterId: string;
  name: string;
  at: string;
  complete: boolean;
  watermarks: Record<string, string>;
  streams: StreamCoverage[];
  missing: string[];
  warnings: string[];
  /** How many objects existed at `at` (objects may be left out of the answer). */
  objectCount: number;
  objects: MaterializedObject[];
}

/** A field change with the managers that own it in the later version (newest first). */
export type AttributedChange = FieldChange & { managers: Attribution[] };

/**
 * A field change as a timeline carries it, in as few bytes as say it all (a history page is mostly
 * these): its path once, as text (formatPath prints the segments losslessly and parsePath reads
 * them back), and `added` / `removed` only when true (an added field has no `before`, a removed one
 * no `after`).
 */
export type TimelineChange = Omit<AttributedChange, "segments" | "added" | "removed"> & {
  added?: true;
  removed?: true;
};

/** One object that differs between two points. */
export interface ObjectDiff {
  kind: string;
  group: string;
  namespace: string;
  name: string;
  change: "added" | "removed" | "changed";
  before: Provenance | null;
  after: Provenance | null;
  changes: AttributedChange[];
}

/** The difference between two points in one cluster (optionally one namespace). */
export interface DiffResult {
  clusterId: string;
  namespace: string | null;
  before: string;
  after: string;
  objects: ObjectDiff[];
  hasGaps: boolean;
}
