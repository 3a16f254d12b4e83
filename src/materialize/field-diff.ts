import { formatPath, type PathSegment } from "./path";

/** One field that differs between two versions; before/after are absent when the field was. */
export interface FieldChange {
  path: string;
  segments: PathSegment[];
  before?: unknown;
  after?: unknown;
  added: boolean;
  removed: boolean;
}

// Lists whose items the API server merges by a key field; the first key every item carries wins.
const LIST_KEYS: Record<string, readonly string[]> = {
  containers: ["name"],
  initContainers: ["name"],
  ephemeralContainers: ["name"],
  env: ["name"],
  volumes: ["name"],
  volumeMounts: ["mountPath", "name"],
  volumeDevices: ["devicePath"],
  ports: ["name", "containerPort", "port"],
  imagePullSecrets: ["name"],
  conditions: ["type"],
  hostAliases: ["ip"],
  resourceClaims: ["name"],
  topologySpreadConstraints: ["topologyKey"],
};
const FALLBACK_KEYS = ["name"] as const;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

type Scalar = string | number | boolean;
const isScalar = (v: unknown): v is Scalar =>
  typeof v === "string" || typeof v === "number" || typeof v === "boolean";

/** Deep equality over JSON values; `{}` and `[]` are values, distinct from absent and from null. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  }
  if (isRecord(a) && isRecord(b)) {
    const ka = Object.keys(a);
    if (ka.length !== Object.keys(b).length) return false;
    return ka.every(k => Object.prototype.hasOwnProperty.call(b, k) && jsonEqual(a[k], b[k]));
  }
  return false;
}

/** Picks the key field that names every item of both lists uniquely, or null to match by index. */
export function listKeyFor(field: string | undefined, a: unknown[], b: unknown[]): string | null {
  const candidates = (field !== undefined && LIST_KEYS[field]) || FALLBACK_KEYS;
  const items = [...a, ...b];
  if (items.length === 0) return null;
  for (const key of candidates) {
    const ok = [a, b].every(list => {
      const seen = new Set<Scalar>();
      return list.every(it => {
        if (!isRecord(it) || !isScalar(it[key]) || seen.has(it[key])) return false;
        seen.add(it[key]);
        return true;
      });
    });
    if (ok) return key;
  }
  return null;
}

function push(out: FieldChange[], segs: PathSegment[], before: unknown, after: unknown): void {
  const c: FieldChange = {
    path: formatPath(segs),
    segments: [...segs],
    added: before === undefined,
    removed: after === undefined,
  };
  if (before !== undefined) c.before = before;
  if (after !== undefined) c.after = after;
  out.push(c);
}

function diffLists(out: FieldChange[], segs: PathSegment[], a: unknown[], b: unknown[]): void {
  const last = segs[segs.length - 1];
  const key = listKeyFor(typeof last === "string" ? last : undefined, a, b);
  if (key === null) {
    const n = Math.max(a.length, b.length);
    for (let i = 0; i < n; i++) diffValues(out, [...segs, i], a[i], b[i]);
    return;
  }
  const byKey = (list: unknown[]) =>
    new Map(list.map(it => [(it as Record<string, Scalar>)[key], it] as const));
  const before = byKey(a);
  const after = byKey(b);
  for (const [k, it] of before) diffValues(out, [...segs, { key, value: k }], it, after.get(k));
  for (const [k, it] of after) {
    if (!before.has(k)) diffValues(out, [...segs, { key, value: k }], undefined, it);
  }
}

function diffValues(out: FieldChange[], segs: PathSegment[], a: unknown, b: unknown): void {
  // Versions read from the journal share every subtree their patch left alone (shared-versions.ts),
  // so most of a version is the very same object as the one before it.
  if (a === b) return;
  if (a === undefined || b === undefined) return push(out, segs, a, b);
  if (isRecord(a) && isRecord(b)) {
    for (const k of Object.keys(a)) diffValues(out, [...segs, k], a[k], b[k]);
    for (const k of Object.keys(b)) {
      if (!Object.prototype.hasOwnProperty.call(a, k))
        diffValues(out, [...segs, k], undefined, b[k]);
    }
    return;
  }
  if (Array.isArray(a) && Array.isArray(b)) return diffLists(out, segs, a, b);
  if (!jsonEqual(a, b)) push(out, segs, a, b);
}

/**
 * Lists the fields that differ between two JSON documents. An added or removed subtree is one
 * change; named lists are matched by their key field, other lists by index.
 */
export function fieldDiff(before: unknown, after: unknown): FieldChange[] {
  const out: FieldChange[] = [];
  diffValues(out, [], before, after);
  return out;
}
