import { createHash } from "node:crypto";
import type { WatchType } from "./schema";

// 128 bits of sha256: collisions are out of reach for any journal size, and the hex form is
// stored as 16 binary bytes by the journal.
const ID_HEX = 32;

function digest(parts: readonly string[]): string {
  const h = createHash("sha256");
  for (const p of parts) {
    h.update(p);
    h.update("\u0000"); // separator so ("ab","c") and ("a","bc") differ
  }
  return h.digest("hex").slice(0, ID_HEX);
}

export interface LiveEventIdInput {
  clusterId: string;
  streamId: string;
  uid: string;
  resourceVersion: string;
  watchType: WatchType;
}

export interface BaselineEventIdInput {
  clusterId: string;
  streamId: string;
  uid: string;
  resourceVersion: string;
  /** When the list was taken, so a relisted unchanged object is a new observation. */
  listedAt: string;
  listResourceVersion: string;
}

/** Deterministic dedup key: live events ignore observation time, baseline events include the list. */
export function eventIdFor(input: LiveEventIdInput | BaselineEventIdInput): string {
  if ("listedAt" in input) {
    return digest([
      "baseline",
      input.clusterId,
      input.streamId,
      input.uid,
      input.resourceVersion,
      input.listResourceVersion,
      input.listedAt,
    ]);
  }
  return digest([
    "live",
    input.clusterId,
    input.streamId,
    input.uid,
    input.resourceVersion,
    input.watchType,
  ]);
}

/** Deterministic id for non-object records (gap, checkpoint, snapshot, ...) from their identifying parts. */
export function recordIdFor(kind: string, ...parts: string[]): string {
  return digest([kind, ...parts]);
}

/** JSON with object keys sorted, so equal objects print equally whatever their key order. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) {
    let out = "[";
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ",";
      out += value[i] === undefined ? "null" : canonicalJson(value[i]);
    }
    return out + "]";
  }
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).sort();
  let out = "{";
  let first = true;
  for (const k of keys) {
    const v = obj[k];
    if (v === undefined) continue;
    if (!first) out += ",";
    first = false;
    out += JSON.stringify(k) + ":" + canonicalJson(v);
  }
  return out + "}";
}

// 64 bits tell two versions of one object apart with a 2^-64 chance of a false match, and every
// stored record carries one, so the extra 8 bytes of a 128-bit hash buy nothing.
const HASH_HEX = 16;

/** Fast equality hash of a JSON value, independent of key order (64-bit hex). */
export function objectHash(obj: unknown): string {
  return createHash("sha1").update(canonicalJson(obj)).digest("hex").slice(0, HASH_HEX);
}
