// A JSON diff shaped for Kubernetes objects. It emits the codec's compact op tuples directly
// (RFC 6902 replace/add/remove that fast-json-patch applies) and builds a JSON pointer only for
// paths that changed, since append diffs every version and most of an object stays the same.

/**
 * Stored op tuples: [0,path,value] replace, [1,path,value] add, [2,path] remove, [3,path] replace
 * with the value of the op before, [4,value] replace /metadata/resourceVersion, [5,path,k] replace
 * with the value of the op k places back (status churn repeats one timestamp). A path sharing at
 * least MIN_SHARED characters with the previous op's path is stored as "<shared>:<rest>".
 */
export type OpTuple =
  | [0 | 1, string, unknown]
  | [2 | 3, string]
  | [4, unknown]
  | [5, string, number];

export const RV_PATH = "/metadata/resourceVersion";
const MIN_SHARED = 4;
const LOOK_BACK = 8;

function escape(key: string): string {
  if (key.indexOf("~") < 0 && key.indexOf("/") < 0) return key;
  return key.replace(/~/g, "~0").replace(/\//g, "~1");
}

function sharedPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

class Emitter {
  readonly out: OpTuple[] = [];
  /** Set when a resourceVersion replace equal to omitRv was left out of the output. */
  rvOmitted = false;
  /** Keys from the root to the value being compared; depth of them are in use. */
  private readonly stack: string[] = [];
  private depth = 0;
  /**
   * The previous op's path as keys, and where its pointer ends after each of them. The prefix the
   * next path shares with it is found by comparing keys (mostly one pointer compare each): comparing
   * the characters of two freshly joined paths made V8 flatten each new path first, and that took a
   * fifth of a typical diff.
   */
  private readonly prevKeys: string[] = [];
  private readonly prevEnds: number[] = [0];
  private prevDepth = 0;
  /** Each emitted op's value (undefined for removals), for back-references. */
  private readonly values: unknown[] = [];

  constructor(private readonly omitRv?: string) {}

  push(key: string): void {
    this.stack[this.depth++] = key;
  }

  pop(): void {
    this.depth--;
  }

  emit(code: 0 | 1 | 2, value?: unknown): void {
    const stack = this.stack;
    const d = this.depth;
    // No other keys spell /metadata/resourceVersion: a "/" inside a key is escaped.
    const atRv = code === 0 && d === 2 && stack[0] === "metadata" && stack[1] === "resourceVersion";
    // The reader restores it from the row's rv column; it leaves no trace in paths or back-references.
    if (atRv && value === this.omitRv) {
      this.rvOmitted = true;
      return;
    }
    // Keys are escaped only here, for the few paths that changed. The shared prefix is the
    // previous path's keys up to the first that differs, then the characters those two keys
    // start with (an escaped key holds no "/", so sharing never runs on past it).
    const prev = this.prevKeys;
    const ends = this.prevEnds;
    const n = d < this.prevDepth ? d : this.prevDepth;
    let level = 0;
    while (level < n && stack[level] === prev[level]) level++;
    let shared = ends[level];
    let rest = "";
    let end = shared;
    let i = level;
    if (level < n) {
      const key = escape(stack[level]);
      const k = sharedPrefix(escape(prev[level]), key);
      shared += 1 + k;
      rest = key.slice(k);
      end = shared + rest.length;
      prev[level] = stack[level];
      ends[++i] = end;
    }
    for (; i < d; i++) {
      const key = escape(stack[i]);
      rest += "/" + key;
      end += 1 + key.length;
      prev[i] = stack[i];
      ends[i + 1] = end;
    }
    this.prevDepth = d;
    if (atRv) {
      this.out.push([4, value]);
    } else {
      const path = shared >= MIN_SHARED ? String(shared) + ":" + rest : this.path(d);
      const back = code === 0 ? this.backRef(value) : 0;
      if (back === 1) this.out.push([3, path]);
      else if (back > 1) this.out.push([5, path, back]);
      else if (code === 2) this.out.push([2, path]);
      else this.out.push([code, path, value]);
    }
    this.values.push(code === 2 ? undefined : value);
  }

  /** The whole pointer of the first d keys. */
  private path(d: number): string {
    let p = "";
    for (let i = 0; i < d; i++) p += "/" + escape(this.stack[i]);
    return p;
  }

  /** How many ops back an equal primitive value was written (0 when none is close). */
  private backRef(value: unknown): number {
    // Only primitives are compared, so an object value is never mistaken for an equal copy.
    if (value === undefined || (value !== null && typeof value === "object")) return 0;
    const n = this.values.length;
    if (n > 0 && this.values[n - 1] === value) return 1;
    // Further back the reference costs a digit, so only strings are worth it.
    if (typeof value !== "string" || value.length < 4) return 0;
    for (let k = 2; k <= LOOK_BACK && k <= n; k++) if (this.values[n - k] === value) return k;
    return 0;
  }
}

function diffValue(a: unknown, b: unknown, e: Emitter): void {
  if (a === b) return;
  if (typeof a === "object" && typeof b === "object" && a !== null && b !== null) {
    const aArr = Array.isArray(a);
    if (aArr === Array.isArray(b)) {
      if (aArr) diffArray(a as unknown[], b as unknown[], e);
      else diffObject(a as Record<string, unknown>, b as Record<string, unknown>, e);
      return;
    }
  }
  // Different types or different primitives: the whole value is replaced.
  e.emit(0, b);
}

const hasOwn = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k);

function diffObject(a: Record<string, unknown>, b: Record<string, unknown>, e: Emitter): void {
  let shared = 0;
  // for-in rather than Object.keys: no key array per object, and V8 reads b[k] through the
  // enumeration cache. JSON values inherit nothing enumerable, so every key is an own key.
  for (const k in b) {
    const bv = b[k];
    if (bv === undefined) continue; // JSON drops undefined members
    const av = a[k];
    // JSON values are never functions, and only __proto__ inherits an object, so hasOwn is rare.
    const own = av !== undefined && typeof av !== "function" && (k !== "__proto__" || hasOwn(a, k));
    if (own) shared++;
    if (av === bv) continue;
    e.push(k);
    if (!own) e.emit(1, bv);
    else diffValue(av, bv, e);
    e.pop();
  }
  let aCount = 0;
  for (const _k in a) aCount++;
  // Every key of a was matched in b, the usual case, so nothing was removed.
  if (aCount === shared) return;
  const aKeys = Object.keys(a);
  for (let i = 0; i < aKeys.length; i++) {
    const k = aKeys[i];
    if (a[k] === undefined) continue;
    const bv = b[k];
    if (bv !== undefined && typeof bv !== "function" && (k !== "__proto__" || hasOwn(b, k)))
      continue;
    e.push(k);
    e.emit(2);
    e.pop();
  }
}

function diffArray(a: unknown[], b: unknown[], e: Emitter): void {
  const common = Math.min(a.length, b.length);
  for (let i = 0; i < common; i++) {
    if (a[i] === b[i]) continue;
    e.push(String(i));
    // JSON turns undefined array slots into null.
    diffValue(a[i] === undefined ? null : a[i], b[i] === undefined ? null : b[i], e);
    e.pop();
  }
  // Removals from the end first keep every index valid while the ops are applied in order.
  for (let i = a.length - 1; i >= common; i--) {
    e.push(String(i));
    e.emit(2);
    e.pop();
  }
  for (let i = common; i < b.length; i++) {
    e.push(String(i));
    e.emit(1, b[i] === undefined ? null : b[i]);
    e.pop();
  }
}

/** Diffs two JSON documents into stored op tuples that turn prev into next. */
export function diffTuples(prev: unknown, next: unknown): OpTuple[] {
  const e = new Emitter();
  diffValue(prev, next, e);
  return e.out;
}

/**
 * Like diffTuples, but leaves out the replace of /metadata/resourceVersion when its new value is rv
 * (the row already stores it); rvOmitted says whether it did, so the reader knows to put it back.
 */
export function diffTuplesOmittingRv(
  prev: unknown,
  next: unknown,
  rv: string,
): { tuples: OpTuple[]; rvOmitted: boolean } {
  const e = new Emitter(rv);
  diffValue(prev, next, e);
  return { tuples: e.out, rvOmitted: e.rvOmitted };
}
