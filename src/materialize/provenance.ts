import type { JournalRecord } from "../event";
import type { MaterializedObject, Provenance } from "./types";

/** Where a record came from, for answers that must show their source. */
export function provenanceOf(rec: JournalRecord): Provenance {
  return {
    streamId: rec.streamId,
    eventId: rec.eventId,
    ingestSeq: rec.ingestSeq ?? null,
    recordType: rec.type,
    watchType: rec.watchType ?? null,
    synthetic: rec.synthetic,
    resourceVersion: rec.resource?.resourceVersion ?? "",
    observedAt: rec.observedAt,
    source: rec.provenance?.source ?? null,
  };
}

/** Turns a record that carries an object into a materialized object. */
export function materializedOf(rec: JournalRecord): MaterializedObject {
  if (!rec.object || !rec.resource) throw new Error(`record ${rec.eventId} carries no object`);
  return {
    kind: rec.resource.kind,
    group: rec.resource.group,
    namespace: rec.resource.namespace,
    name: rec.resource.name,
    object: rec.object as Record<string, unknown>,
    provenance: provenanceOf(rec),
  };
}

/** Parses an ISO time given by a user, failing with the offending text. */
export function parseTime(text: string, what = "time"): number {
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) throw new Error(`${what} "${text}" is not a date (use ISO 8601)`);
  return ms;
}
