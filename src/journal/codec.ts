import { deflateRawSync, inflateRawSync } from "node:zlib";
import { applyOperation, compare, type Operation } from "fast-json-patch";

/** How a record body is encoded; stored in the low bits of the flags column. */
export const ENC_NONE = 0;
export const ENC_KEYFRAME = 1;
export const ENC_PATCH = 2;
export const ENC_MASK = 3;
/** Set when the body is raw-deflated. */
export const ENC_DEFLATE = 4;

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

// Compact op tuples: ~40% smaller than RFC 6902 objects, and converted back exactly on read.
type OpTuple = [0, string, unknown] | [1, string, unknown] | [2, string];

function toTuples(ops: Operation[]): OpTuple[] {
  return ops.map(op => {
    switch (op.op) {
      case "replace":
        return [0, op.path, op.value];
      case "add":
        return [1, op.path, op.value];
      case "remove":
        return [2, op.path];
      default:
        throw new Error(`unexpected patch op ${op.op} from compare`);
    }
  });
}

/** Expands stored tuples back into RFC 6902 operations. */
export function fromTuples(tuples: OpTuple[]): Operation[] {
  return tuples.map(t => {
    if (t[0] === 0) return { op: "replace", path: t[1], value: t[2] };
    if (t[0] === 1) return { op: "add", path: t[1], value: t[2] };
    if (t[0] === 2) return { op: "remove", path: t[1] };
    throw new Error(`corrupt patch tuple ${JSON.stringify(t)}`);
  });
}

function pack(text: string, opts: CodecOptions): { body: Buffer; deflated: boolean } {
  const raw = Buffer.from(text, "utf8");
  if (raw.length < opts.deflateMinBytes) return { body: raw, deflated: false };
  const z = deflateRawSync(raw, { level: 6 });
  return z.length < raw.length ? { body: z, deflated: true } : { body: raw, deflated: false };
}

function unpack(enc: number, body: Buffer): string {
  const raw = enc & ENC_DEFLATE ? inflateRawSync(body) : body;
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
    const ops = compare(prev.object as object, object as object);
    const patchJson = JSON.stringify(toTuples(ops));
    // A patch that outweighs the object buys nothing and lengthens every read of the chain.
    if (patchJson.length < prev.keyframeBytes) {
      const p = pack(patchJson, opts);
      return {
        enc: ENC_PATCH | (p.deflated ? ENC_DEFLATE : 0),
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
    enc: ENC_KEYFRAME | (k.deflated ? ENC_DEFLATE : 0),
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
