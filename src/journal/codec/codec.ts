import { applyOperation, type Operation } from "fast-json-patch";
import { DEFLATE_DICTIONARY } from "./dictionary";
import { diffTuples, diffTuplesOmittingRv, RV_PATH, type OpTuple } from "./delta";
import { linesToTuples, tuplesToLines } from "./patch-text";
import { rawCodec } from "./zlib-reuse";

/** How a record body is encoded; stored in the low bits of the flags column. */
export const ENC_NONE = 0;
export const ENC_KEYFRAME = 1;
export const ENC_PATCH = 2;
export const ENC_MASK = 3;
/** Set when the body is raw-deflated. */
export const ENC_DEFLATE = 4;
/** Set (with ENC_DEFLATE) when the deflate stream was primed with DEFLATE_DICTIONARY. */
export const ENC_DICT = 32;
/**
 * Set on a patch taken against its keyframe (the row in the base column) rather than against the
 * version before it. Any version is then one keyframe plus one patch away; rows written before
 * schema v4 lack the flag and still chain through every earlier version.
 */
export const ENC_STAR = 64;
/**
 * Set on a patch that leaves out the change of metadata.resourceVersion because the new value is
 * the row's rv column; the reader writes it back. It saves a dozen bytes on nearly every record.
 */
export const ENC_RV = 128;
/** Set on a patch stored in the line form of patch-text.ts rather than as a JSON array. */
export const ENC_LINES = 256;
/** Every flag bit that describes the body encoding (the rest belong to the record). */
export const ENC_BITS = ENC_MASK | ENC_DEFLATE | ENC_DICT | ENC_STAR | ENC_RV | ENC_LINES;
/**
 * Never stored: the body is still its raw text, long enough to deflate, and the journal's writer
 * thread deflates it on the way to the file (finishPack), so the planning thread does not.
 */
export const ENC_PACK_LATER = 1 << 20;

export interface CodecOptions {
  keyframeEvery: number;
  /** Bodies at least this long are deflated (kept only when smaller). */
  deflateMinBytes: number;
  /** Leaves the deflate to the writer thread (ENC_PACK_LATER). */
  packLater?: boolean;
}

/**
 * A patch against the keyframe grows as the object drifts from it; past this share of the
 * keyframe's JSON a fresh keyframe costs less than the patches that would follow.
 */
const MAX_PATCH_SHARE = 0.5;

/** The keyframe that the next version of an object is diffed against. */
export interface BaseVersion {
  object: unknown;
  /** Record seq of the keyframe. */
  seq: number;
  /** Patches stored against this keyframe so far. */
  chainLen: number;
  /** JSON length of the keyframe. */
  keyframeBytes: number;
}

export interface EncodedBody {
  enc: number;
  body: Buffer;
  /** Seq of the keyframe a patch applies to; null for a keyframe. */
  base: number | null;
  chainLen: number;
  keyframeBytes: number;
}

/** Expands stored tuples back into RFC 6902 operations. */
export function fromTuples(tuples: OpTuple[]): Operation[] {
  let prevPath = "";
  const values: unknown[] = [];
  return tuples.map(t => {
    if (t[0] === 4) {
      prevPath = RV_PATH;
      values.push(t[1]);
      return { op: "replace", path: RV_PATH, value: t[1] };
    }
    let path = t[1];
    if (path.length > 0 && path[0] !== "/") {
      const colon = path.indexOf(":");
      const n = Number(path.slice(0, colon));
      if (colon < 1 || !Number.isInteger(n) || n > prevPath.length)
        throw new Error(`corrupt patch path ${path}`);
      path = prevPath.slice(0, n) + path.slice(colon + 1);
    }
    prevPath = path;
    let op: Operation;
    if (t[0] === 0) op = { op: "replace", path, value: t[2] };
    else if (t[0] === 1) op = { op: "add", path, value: t[2] };
    else if (t[0] === 2) op = { op: "remove", path };
    else if (t[0] === 3 && values.length > 0)
      op = { op: "replace", path, value: values[values.length - 1] };
    else if (t[0] === 5 && Number.isInteger(t[2]) && t[2] > 0 && t[2] <= values.length)
      op = { op: "replace", path, value: values[values.length - t[2]] };
    else throw new Error(`corrupt patch tuple ${JSON.stringify(t)}`);
    values.push(op.op === "remove" ? undefined : op.value);
    return op;
  });
}

// New bodies are deflated with the dictionary; a deflated body without ENC_DICT inflates without.
const withDictionary = rawCodec(DEFLATE_DICTIONARY, 6);
const withoutDictionary = rawCodec(undefined, 6);

/** The body bytes and the encoding bits they add to the flags. */
function pack(text: string, opts: CodecOptions): { body: Buffer; bits: number } {
  const raw = Buffer.from(text, "utf8");
  if (raw.length < opts.deflateMinBytes) return { body: raw, bits: 0 };
  if (opts.packLater) return { body: raw, bits: ENC_PACK_LATER };
  const z = withDictionary.deflate(raw);
  return z.length < raw.length ? { body: z, bits: ENC_DEFLATE | ENC_DICT } : { body: raw, bits: 0 };
}

/** What the writer thread stores for a body flagged ENC_PACK_LATER: deflated when that is smaller. */
export function finishPack(flags: number, body: Buffer): { flags: number; body: Buffer } {
  if (!(flags & ENC_PACK_LATER)) return { flags, body };
  const f = flags & ~ENC_PACK_LATER;
  const z = withDictionary.deflate(body);
  return z.length < body.length
    ? { flags: f | ENC_DEFLATE | ENC_DICT, body: z }
    : { flags: f, body };
}

function unpack(enc: number, body: Buffer): string {
  if (!(enc & ENC_DEFLATE)) return body.toString("utf8");
  const raw = enc & ENC_DICT ? withDictionary.inflate(body) : withoutDictionary.inflate(body);
  return raw.toString("utf8");
}

/**
 * Encodes an object as a patch against its keyframe, or as a new keyframe when the rules call for
 * one (every keyframeEvery versions, or when the patch has grown too large to be worth keeping).
 * The object is only serialised for keyframes, which saves a full stringify on the hot path.
 */
export function encodeObject(
  base: BaseVersion | null,
  object: unknown,
  opts: CodecOptions,
  rowRv: string | null = null,
): EncodedBody {
  if (base && base.chainLen + 1 < opts.keyframeEvery) {
    let tuples: OpTuple[];
    let rvOmitted = false;
    if (rowRv === null) tuples = diffTuples(base.object, object);
    else ({ tuples, rvOmitted } = diffTuplesOmittingRv(base.object, object, rowRv));
    const lines = tuplesToLines(tuples);
    const patchText = lines ?? JSON.stringify(tuples);
    // fast-json-patch refuses any op on a "__proto__" key (a legal ConfigMap key), so such a
    // version is stored whole rather than as a patch nobody could apply.
    if (
      patchText.length < base.keyframeBytes * MAX_PATCH_SHARE &&
      !patchText.includes("__proto__")
    ) {
      const p = pack(patchText, opts);
      return {
        enc:
          ENC_PATCH |
          ENC_STAR |
          (lines !== null ? ENC_LINES : 0) |
          (rvOmitted ? ENC_RV : 0) |
          p.bits,
        body: p.body,
        base: base.seq,
        chainLen: base.chainLen + 1,
        keyframeBytes: base.keyframeBytes,
      };
    }
  }
  return encodeKeyframe(object, opts);
}

/** Encodes an object as a self-contained keyframe. */
export function encodeKeyframe(object: unknown, opts: CodecOptions): EncodedBody {
  const json = JSON.stringify(object);
  const k = pack(json, opts);
  return {
    enc: ENC_KEYFRAME | k.bits,
    body: k.body,
    base: null,
    chainLen: 0,
    keyframeBytes: json.length,
  };
}

/** The JSON text of a keyframe body. */
export function keyframeText(enc: number, body: Buffer): string {
  return unpack(enc, body);
}

/** Decodes a keyframe body into a fresh object. */
export function decodeKeyframe(enc: number, body: Buffer): unknown {
  return JSON.parse(unpack(enc, body));
}

/**
 * The RFC 6902 operations of a stored patch body; rv is the row's rv column, which a patch flagged
 * ENC_RV turns back into the resourceVersion replace it left out.
 */
export function patchOps(enc: number, body: Buffer, rv: string | null = null): Operation[] {
  const text = unpack(enc, body);
  const ops = fromTuples(enc & ENC_LINES ? linesToTuples(text) : (JSON.parse(text) as OpTuple[]));
  if (enc & ENC_RV) {
    if (rv === null)
      throw new Error("patch leaves out resourceVersion but the row has none to restore");
    ops.push({ op: "replace", path: RV_PATH, value: rv });
  }
  return ops;
}

/** Applies a stored patch body to doc in place and returns the (possibly replaced) document. */
export function applyPatchBody(
  doc: unknown,
  enc: number,
  body: Buffer,
  rv: string | null = null,
): unknown {
  let cur = doc;
  for (const op of patchOps(enc, body, rv)) cur = applyOperation(cur, op, false, true).newDocument;
  return cur;
}

/** Rebuilds a version from a keyframe and the patches after it, oldest first (a star patch is a one-link chain). */
export function reconstruct(chain: { enc: number; body: Buffer; rv?: string | null }[]): unknown {
  if (chain.length === 0) throw new Error("empty delta chain");
  const head = chain[0];
  if ((head.enc & ENC_MASK) !== ENC_KEYFRAME)
    throw new Error("delta chain does not start at a keyframe");
  let doc = decodeKeyframe(head.enc, head.body);
  for (let i = 1; i < chain.length; i++) {
    const link = chain[i];
    if ((link.enc & ENC_MASK) !== ENC_PATCH) throw new Error("delta chain link is not a patch");
    doc = applyPatchBody(doc, link.enc, link.body, link.rv ?? null);
  }
  return doc;
}
