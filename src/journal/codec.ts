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

// Compact op tuples: [0,path,value] replace, [1,path,value] add, [2,path] remove, and [3,path]
// replace with the same value as the op before (status churn repeats one timestamp several times).
// A path that shares a prefix with the previous op's path is stored as "<prefixLength>:<rest>";
// real JSON pointers start with "/" (or are empty), so the two forms cannot be confused.
type OpTuple = [0 | 1, string, unknown] | [2 | 3, string];
const MIN_SHARED = 4;

function sharedPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

function toTuples(ops: Operation[]): OpTuple[] {
  let prevPath = "";
  let prevValue: unknown = undefined;
  let prevHasValue = false;
  return ops.map(op => {
    const shared = sharedPrefix(prevPath, op.path);
    const path = shared >= MIN_SHARED ? `${shared}:${op.path.slice(shared)}` : op.path;
    prevPath = op.path;
    let t: OpTuple;
    switch (op.op) {
      case "replace":
        // Only primitives are compared, so an object value is never mistaken for an equal copy.
        t =
          prevHasValue &&
          op.value === prevValue &&
          (op.value === null || typeof op.value !== "object")
            ? [3, path]
            : [0, path, op.value];
        break;
      case "add":
        t = [1, path, op.value];
        break;
      case "remove":
        t = [2, path];
        break;
      default:
        throw new Error(`unexpected patch op ${op.op} from compare`);
    }
    prevHasValue = op.op !== "remove";
    prevValue = op.op === "remove" ? undefined : op.value;
    return t;
  });
}

/** Expands stored tuples back into RFC 6902 operations. */
export function fromTuples(tuples: OpTuple[]): Operation[] {
  let prevPath = "";
  let prevValue: unknown = undefined;
  return tuples.map(t => {
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
    else if (t[0] === 3) op = { op: "replace", path, value: prevValue };
    else throw new Error(`corrupt patch tuple ${JSON.stringify(t)}`);
    prevValue = op.op === "remove" ? undefined : op.value;
    return op;
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
