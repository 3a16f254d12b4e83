import { deflateRawSync, inflateRawSync } from "node:zlib";
import { applyOperation, type Operation } from "fast-json-patch";
import { DEFLATE_DICTIONARY } from "./dictionary";
import { diffTuples, RV_PATH, type OpTuple } from "./diff";

/** How a record body is encoded; stored in the low bits of the flags column. */
export const ENC_NONE = 0;
export const ENC_KEYFRAME = 1;
export const ENC_PATCH = 2;
export const ENC_MASK = 3;
/** Set when the body is raw-deflated. */
export const ENC_DEFLATE = 4;
/** Set (with ENC_DEFLATE) when the deflate stream was primed with DEFLATE_DICTIONARY. */
export const ENC_DICT = 32;

export interface CodecOptions {
  keyframeEvery: number;
  /** Bodies at least this long are deflated (kept only when smaller). */
  deflateMinBytes: number;
}

export interface PreviousVersion {
  object: unknown;
  /** Patches since the last keyframe (0 when the previous version is a keyframe). */
  chainLen: number;
  /** JSON length of the object at its last keyframe. */
  keyframeBytes: number;
}

export interface EncodedBody {
  enc: number;
  body: Buffer;
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

function pack(text: string, opts: CodecOptions): { body: Buffer; deflated: boolean } {
  const raw = Buffer.from(text, "utf8");
  if (raw.length < opts.deflateMinBytes) return { body: raw, deflated: false };
  const z = deflateRawSync(raw, { level: 6, dictionary: DEFLATE_DICTIONARY });
  return z.length < raw.length ? { body: z, deflated: true } : { body: raw, deflated: false };
}

function unpack(enc: number, body: Buffer): string {
  if (!(enc & ENC_DEFLATE)) return body.toString("utf8");
  const raw =
    enc & ENC_DICT
      ? inflateRawSync(body, { dictionary: DEFLATE_DICTIONARY })
      : inflateRawSync(body);
  return raw.toString("utf8");
}

/**
 * Encodes an object as a keyframe or a patch from the previous version, whichever the rules pick.
 * The object is only serialised for keyframes; a patch is weighed against the object's size at its
 * last keyframe, which saves a full stringify on the hot path.
 */
export function encodeObject(
  prev: PreviousVersion | null,
  object: unknown,
  opts: CodecOptions,
): EncodedBody {
  if (prev && prev.chainLen + 1 < opts.keyframeEvery) {
    const patchJson = JSON.stringify(diffTuples(prev.object, object));
    // A patch that outweighs the object buys nothing and lengthens every read of the chain.
    if (patchJson.length < prev.keyframeBytes) {
      const p = pack(patchJson, opts);
      return {
        enc: ENC_PATCH | (p.deflated ? ENC_DEFLATE | ENC_DICT : 0),
        body: p.body,
        chainLen: prev.chainLen + 1,
        keyframeBytes: prev.keyframeBytes,
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
    enc: ENC_KEYFRAME | (k.deflated ? ENC_DEFLATE | ENC_DICT : 0),
    body: k.body,
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

/** Applies a stored patch body to doc in place and returns the (possibly replaced) document. */
export function applyPatchBody(doc: unknown, enc: number, body: Buffer): unknown {
  const ops = fromTuples(JSON.parse(unpack(enc, body)) as OpTuple[]);
  let cur = doc;
  for (const op of ops) {
    cur = applyOperation(cur, op, false, true).newDocument;
  }
  return cur;
}

/** Rebuilds a version from its keyframe and the patches after it, oldest first. */
export function reconstruct(chain: { enc: number; body: Buffer }[]): unknown {
  if (chain.length === 0) throw new Error("empty delta chain");
  const head = chain[0];
  if ((head.enc & ENC_MASK) !== ENC_KEYFRAME)
    throw new Error("delta chain does not start at a keyframe");
  let doc = decodeKeyframe(head.enc, head.body);
  for (let i = 1; i < chain.length; i++) {
    const link = chain[i];
    if ((link.enc & ENC_MASK) !== ENC_PATCH) throw new Error("delta chain link is not a patch");
    doc = applyPatchBody(doc, link.enc, link.body);
  }
  return doc;
}
