import type { JournalRecord, ResourceRef } from "../../event";
import { ENC_KEYFRAME, ENC_MASK, ENC_NONE, reconstruct } from "../codec/codec";
import { isoFromMs } from "../codec/iso-time";
import { TYPE_CODES, WATCH_CODES } from "./schema";
import type { RecordRow, Store } from "./store";

export const FLAG_SYNTHETIC = 8;
/** Provenance is exactly { source: "watch" }, the common case, so it is not spelled out in meta. */
export const FLAG_PROV_WATCH = 16;

/**
 * Raw bytes for a 16- or 32-character lowercase hex string (ids, hashes), else null; no regex.
 * With into (of the right length) the bytes are written there instead of a new Buffer, for values
 * that are only bound to a statement (SQLite copies bound blobs).
 */
export function packHex(s: string, into?: Buffer): Buffer | null {
  if (s.length !== 32 && s.length !== 16) return null;
  const out = into?.length === s.length >> 1 ? into : Buffer.allocUnsafe(s.length >> 1);
  for (let i = 0; i < out.length; i++) {
    const hi = nibble(s.charCodeAt(2 * i));
    const lo = nibble(s.charCodeAt(2 * i + 1));
    if (hi < 0 || lo < 0) return null;
    out[i] = (hi << 4) | lo;
  }
  return out;
}

function nibble(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  return -1;
}

/** Stores 128-bit hex ids as 16 raw bytes; anything else stays text (SQLite never equates the two). */
export function packId(id: string, into?: Buffer): Buffer | string {
  return id.length === 32 ? (packHex(id, into) ?? id) : id;
}

/** Inverse of packId. */
export function unpackId(v: Buffer | string): string {
  return typeof v === "string" ? v : v.toString("hex");
}

/** Compact keys for the optional parts of a record kept in the meta column. */
export interface Meta {
  p?: JournalRecord["provenance"];
  g?: JournalRecord["gap"];
  c?: JournalRecord["coverage"];
  k?: JournalRecord["checkpoint"];
  b?: JournalRecord["baseline"];
  s?: JournalRecord["snapshot"];
  x?: JournalRecord["pruned"];
  a?: JournalRecord["audit"];
  o?: string; // observedAt as written, when it is not the canonical ISO form of the stored millis
  r?: ResourceRef; // resource, when it cannot be derived from the object and identity tables
  cl?: string; // clusterId, when it differs from the stream's
}

/** Record payloads copied verbatim into meta under a compact key; one table for write and read. */
export const PAYLOAD_KEYS = [
  ["gap", "g"],
  ["coverage", "c"],
  ["checkpoint", "k"],
  ["baseline", "b"],
  ["snapshot", "s"],
  ["pruned", "x"],
  ["audit", "a"],
] as const satisfies readonly (readonly [keyof JournalRecord, keyof Meta])[];

type PayloadBag = Record<string, unknown>;

/** Copies a record's payloads into meta. */
export function payloadsToMeta(rec: JournalRecord, meta: Meta): void {
  // Plain events carry none of these, and the table walk with computed keys costs more than the
  // rest of a record's bookkeeping, so the common case is checked with fixed property reads first.
  if (
    !rec.gap &&
    !rec.coverage &&
    !rec.checkpoint &&
    !rec.baseline &&
    !rec.snapshot &&
    !rec.pruned &&
    !rec.audit
  )
    return;
  for (const [field, key] of PAYLOAD_KEYS) {
    if (rec[field]) (meta as PayloadBag)[key] = rec[field];
  }
}

/** Copies meta's payloads back onto a record. */
export function metaToPayloads(meta: Meta, rec: JournalRecord): void {
  for (const [field, key] of PAYLOAD_KEYS) {
    if (meta[key]) (rec as PayloadBag)[field] = meta[key];
  }
}

/** Encodes the record type code, failing loudly on an unknown type. */
export function typeCode(t: JournalRecord["type"]): number {
  const i = TYPE_CODES.indexOf(t);
  if (i < 0) throw new Error(`unknown record type ${t}`);
  return i;
}

/** Encodes the watch type code, or null when absent. */
export function watchCode(w: JournalRecord["watchType"]): number | null {
  if (w === undefined) return null;
  const i = WATCH_CODES.indexOf(w);
  if (i < 0) throw new Error(`unknown watch type ${w}`);
  return i;
}

/** Decodes the object stored in a row (rebuilding delta chains); undefined when the row has none. */
export function rowObject(store: Store, row: RecordRow): unknown {
  const enc = row.flags & ENC_MASK;
  if (enc === ENC_NONE || !row.body) return undefined;
  if (enc === ENC_KEYFRAME && row.object === null)
    return reconstruct([{ enc: row.flags, body: row.body }]);
  if (row.object === null) throw new Error(`record ${row.seq}: a patch without an object`);
  return store.versions.objectOfRow(row.object, row);
}

/** Turns a stored row back into the record that was appended (with its ingestSeq). */
export function decodeRow(store: Store, row: RecordRow, object?: unknown): JournalRecord {
  const stream = store.registry.streamOf(row.stream, row.seq);
  const meta: Meta = row.meta ? (JSON.parse(row.meta) as Meta) : {};
  const rec: JournalRecord = {
    type: TYPE_CODES[row.type],
    eventId: unpackId(row.event_id),
    ingestSeq: row.seq,
    clusterId: meta.cl ?? stream.clusterId,
    streamId: stream.streamId,
    observedAt: meta.o ?? isoFromMs(row.observed_at),
    synthetic: (row.flags & FLAG_SYNTHETIC) !== 0,
  };
  if (row.watch !== null) rec.watchType = WATCH_CODES[row.watch];
  const obj = object !== undefined ? object : rowObject(store, row);
  if (meta.r) {
    rec.resource = meta.r;
  } else if (row.object !== null) {
    const o = store.registry.objectRow(row.object);
    const md = ((obj as { metadata?: { uid?: string } } | undefined)?.metadata ?? {}) as {
      uid?: string;
    };
    rec.resource = {
      group: o.group,
      version: stream.version,
      kind: o.kind,
      namespace: o.namespace,
      name: o.name,
      uid: md.uid ?? "",
      resourceVersion: row.rv ?? "",
    };
  }
  if (row.hash !== null)
    rec.objectHash = typeof row.hash === "string" ? row.hash : row.hash.toString("hex");
  if (obj !== undefined) rec.object = obj as JournalRecord["object"];
  if (row.flags & FLAG_PROV_WATCH) rec.provenance = { source: "watch" };
  else if (meta.p) rec.provenance = meta.p;
  metaToPayloads(meta, rec);
  return rec;
}
