// An object's history can hold hundreds of versions of one keyframe. Parsing that keyframe again for
// every version would cost more than the rest of the read, so versions are built copy-on-write:
// each copies only the containers its patch touches and shares every other subtree with the one
// parsed keyframe. The results are for reading; a caller that edits one must clone it first.
import { applyOperation, type Operation } from "fast-json-patch";
import { ENC_KEYFRAME, ENC_MASK, ENC_STAR, patchOps } from "../codec/codec";
import type { BodyRow, Store } from "../store/store";

const hasOwn = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k);

function setOwn(o: Record<string, unknown>, k: string, v: unknown): void {
  if (k === "__proto__")
    Object.defineProperty(o, k, { value: v, writable: true, enumerable: true, configurable: true });
  else o[k] = v;
}

const unescape = (raw: string): string =>
  raw.indexOf("~") < 0 ? raw : raw.replace(/~1/g, "/").replace(/~0/g, "~");

// A canonical array index ("0", "17"; not "01" or "-1"), the only form the journal's diff writes.
const INDEX = /^(0|[1-9][0-9]*)$/;

/**
 * Performs an add, replace or remove on a container this version owns. Returns false for anything
 * else (another op, an odd index, a banned key), which the caller hands to fast-json-patch so its
 * rules and errors apply unchanged.
 */
function applyInPlace(parent: object, key: string, op: Operation): boolean {
  if (op.op !== "add" && op.op !== "replace" && op.op !== "remove") return false;
  if (Array.isArray(parent)) {
    if (op.op === "add" && key === "-") {
      parent.push(op.value);
      return true;
    }
    if (!INDEX.test(key)) return false;
    const i = Number(key);
    if (op.op === "add") {
      if (i > parent.length) return false;
      parent.splice(i, 0, op.value);
    } else {
      if (i >= parent.length) return false;
      if (op.op === "replace") parent[i] = op.value;
      else parent.splice(i, 1);
    }
    return true;
  }
  if (key === "__proto__") return false;
  const o = parent as Record<string, unknown>;
  if (op.op === "remove") {
    if (!hasOwn(o, key)) return false;
    delete o[key];
  } else o[key] = op.value;
  return true;
}

/** A shallow copy of v that this version owns (recorded in fresh). */
function copy<T extends object>(v: T, fresh: Set<object>): T {
  // A module-level function, not a closure per call: a history applies hundreds of patches.
  const c = (Array.isArray(v) ? v.slice() : { ...v }) as T;
  fresh.add(c);
  return c;
}

/** Applies ops to doc without touching it: containers on each op's path are copied first. */
export function applyCopyOnWrite(doc: unknown, ops: readonly Operation[]): unknown {
  const fresh = new Set<object>();
  let root = doc;
  for (const op of ops) {
    if (op.path !== "" && root !== null && typeof root === "object") {
      if (!fresh.has(root)) root = copy(root, fresh);
      const keys = op.path.split("/");
      let parent = root as Record<string, unknown>;
      let reached = true;
      for (let i = 1; i < keys.length - 1; i++) {
        const k = unescape(keys[i]);
        const child = hasOwn(parent, k) ? parent[k] : undefined;
        if (child === null || typeof child !== "object") {
          reached = false; // a missing step is left for fast-json-patch to report
          break;
        }
        const own = fresh.has(child) ? child : copy(child, fresh);
        if (own !== child) setOwn(parent, k, own);
        parent = own as Record<string, unknown>;
      }
      // The walk above already owns the parent, so the op itself needs no second walk.
      if (reached && applyInPlace(parent, unescape(keys[keys.length - 1]), op)) continue;
    }
    root = applyOperation(root, op, false, true).newDocument;
  }
  return root;
}

/** Rebuilds an object row's version, sharing its keyframe's parsed tree through `keyframes`. */
export function sharedVersion(
  store: Store,
  objectId: number,
  row: BodyRow,
  keyframes: Map<number, unknown>,
): unknown {
  if (!row.body) return undefined;
  const enc = row.flags & ENC_MASK;
  if (enc === ENC_KEYFRAME) {
    const obj = JSON.parse(store.versions.keyframeJson(row)) as unknown;
    keyframes.set(row.seq, obj);
    return obj;
  }
  if (!(row.flags & ENC_STAR) || row.base === null)
    return store.versions.objectOfRow(objectId, row);
  let kf = keyframes.get(row.base);
  if (kf === undefined) {
    kf = JSON.parse(store.versions.keyframeJsonAt(objectId, row.base)) as unknown;
    keyframes.set(row.base, kf);
  }
  return applyCopyOnWrite(kf, patchOps(row.flags, row.body, row.rv));
}
