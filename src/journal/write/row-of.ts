// The per-record rules of the append path as a pure function: what a record becomes as a row,
// before any identity look-up, dedup check or delta encoding (those need the file).
import { objectHash } from "../../event";
import type { JournalRecord, ResourceRef } from "../../event";
import { canonicalIsoMs } from "../codec/iso-time";
import { FLAG_PROV_WATCH, FLAG_SYNTHETIC, payloadsToMeta, type Meta } from "../store/rows";
import { JournalError } from "../types";
import { redactObject, type RedactPolicy } from "./redact";

/** What rowOf needs to know about the record's stream. */
export interface RowStream {
  clusterId: string;
  /** The API version the stream lists; a resource of another version is spelled out in meta. */
  version: string;
}

export interface RowContext {
  policy: RedactPolicy;
}

/** How a stored row changes its stream's state when it commits. */
export type StreamEffect =
  | "baseline-done"
  | "degraded"
  | "active"
  | "unavailable"
  | "stopped"
  | null;

/** A record as a row, short of its object id and encoded body. */
export interface RowPlan {
  observedMs: number;
  meta: Meta;
  /** Synthetic and provenance flags; the body's encoding bits are added once it is encoded. */
  flags: number;
  /** The rv column: a durable position of the stream, or null when the row holds none. */
  rv: string | null;
  hash: string | null;
  /** The object to store (redacted), or undefined for a row without one. */
  object: unknown;
  /** The identity the object is versioned under; null stores the object whole (a keyframe). */
  identity: ResourceRef | null;
  /** The resourceVersion a patch may leave out because the rv column restores it. */
  patchRv: string | null;
  effect: StreamEffect;
}

function invalid(rec: JournalRecord, why: string): JournalError {
  return new JournalError(`invalid record ${rec.eventId ?? "?"} (${rec.type}): ${why}`, "INVALID");
}

/** Rejects a record that cannot be placed: every row needs its id, stream and cluster. */
export function checkIds(rec: JournalRecord): void {
  if (!rec.eventId || !rec.streamId || !rec.clusterId)
    throw invalid(rec, "eventId, streamId and clusterId are required");
}

function observedMs(rec: JournalRecord, meta: Meta): number {
  const ms = canonicalIsoMs(rec.observedAt);
  if (ms !== null) return ms;
  const parsed = Date.parse(rec.observedAt);
  if (Number.isNaN(parsed)) throw invalid(rec, `observedAt "${rec.observedAt}" is not a date`);
  // Any other spelling is kept verbatim, so the record reads back exactly as written.
  if (new Date(parsed).toISOString() !== rec.observedAt) meta.o = rec.observedAt;
  return parsed;
}

/** Which position a record's rv column holds, by record type. */
function rvOf(rec: JournalRecord): string | null {
  // Summaries and coverage notes name no position of the stream.
  if (
    rec.type === "gap" ||
    rec.type === "coverage_change" ||
    rec.type === "snapshot" ||
    rec.type === "pruned"
  )
    return null;
  // A resource without an object must not be mistaken for a durable position.
  let rv =
    rec.resource && !rec.object
      ? null
      : (rec.resource?.resourceVersion ??
        rec.checkpoint?.resourceVersion ??
        rec.baseline?.listResourceVersion ??
        null);
  if (rec.type === "checkpoint" || (rec.type === "baseline" && !rec.object))
    rv = rec.checkpoint?.resourceVersion ?? rec.baseline?.listResourceVersion ?? rv;
  return rv;
}

function effectOf(rec: JournalRecord): StreamEffect {
  if (rec.type === "baseline" && !rec.object) return "baseline-done";
  if (rec.type === "gap") return "degraded";
  if (rec.type === "coverage_change" && rec.coverage)
    return rec.coverage.state === "available" ? "active" : rec.coverage.state;
  return null;
}

/** Whether o has exactly one key (without building a key array per record). */
function onlyKey(o: object): boolean {
  let n = 0;
  for (const _k in o) if (++n > 1) return false;
  return n === 1;
}

/** The row a record becomes on a stream, by the journal's per-type rules (pure). */
export function rowOf(rec: JournalRecord, stream: RowStream, ctx: RowContext): RowPlan {
  const meta: Meta = {};
  const ms = observedMs(rec, meta);
  if (rec.clusterId !== stream.clusterId) meta.cl = rec.clusterId;
  let flags = rec.synthetic ? FLAG_SYNTHETIC : 0;
  if (rec.provenance) {
    if (rec.provenance.source === "watch" && onlyKey(rec.provenance)) flags |= FLAG_PROV_WATCH;
    else meta.p = rec.provenance;
  }
  payloadsToMeta(rec, meta);

  let object: unknown = rec.object;
  let hash = rec.objectHash ?? null;
  if (rec.object) {
    const kind = rec.resource?.kind ?? rec.object.kind ?? "";
    const red = redactObject(rec.object as Record<string, unknown>, kind, ctx.policy);
    object = red.object;
    // A hash over the clear object would let someone test guesses of the secret value.
    if (red.redacted || hash === null) hash = objectHash(object);
  }
  const identity = rec.object && rec.resource ? rec.resource : null;
  if (identity) {
    const derivedUid = (object as { metadata?: { uid?: string } }).metadata?.uid ?? "";
    if (identity.version !== stream.version || identity.uid !== derivedUid) meta.r = identity;
  } else if (rec.resource) {
    meta.r = rec.resource;
  }
  return {
    observedMs: ms,
    meta,
    flags,
    rv: rvOf(rec),
    hash,
    object,
    identity,
    // Events and baselines store resource.resourceVersion in the rv column unchanged, so their
    // patches may leave it out and let the reader restore it from there.
    patchRv:
      identity && (rec.type === "event" || rec.type === "baseline")
        ? identity.resourceVersion
        : null,
    effect: effectOf(rec),
  };
}
