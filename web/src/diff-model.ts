// Diff of two versions of an object: a field list (path, before, after) and side-by-side lines of the
// pretty-printed objects. Server metadata (managedFields, resourceVersion, uid, ...) is noise when
// asking "what changed", so it is hidden unless asked for.

/** metadata fields the API server writes about its own copy. */
export const SERVER_METADATA = [
  "managedFields",
  "resourceVersion",
  "uid",
  "creationTimestamp",
  "generation",
  "selfLink",
] as const;

type Json = unknown;

function isObject(v: Json): v is Record<string, Json> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The object without the server's metadata fields (a copy; the input is untouched). */
export function withoutServerMetadata(obj: Json): Json {
  if (!isObject(obj) || !isObject(obj.metadata)) return obj;
  const metadata: Record<string, Json> = {};
  for (const [k, v] of Object.entries(obj.metadata))
    if (!(SERVER_METADATA as readonly string[]).includes(k)) metadata[k] = v;
  return { ...obj, metadata };
}

/** A path segment as written in a field path: plain keys dotted, others bracketed and quoted. */
function seg(k: string): string {
  return /^[A-Za-z_][\w-]*$/.test(k) ? `.${k}` : `[${JSON.stringify(k)}]`;
}

/** Leaves of a JSON value by path (spec.replicas, spec.containers[0].image); empty {} and [] are leaves. */
export function flatten(v: Json, prefix = "", out = new Map<string, Json>()): Map<string, Json> {
  if (Array.isArray(v)) {
    if (v.length === 0) out.set(prefix || "(root)", []);
    v.forEach((x, i) => flatten(x, `${prefix}[${i}]`, out));
  } else if (isObject(v)) {
    const keys = Object.keys(v);
    if (keys.length === 0) out.set(prefix || "(root)", {});
    for (const k of keys) flatten(v[k], prefix ? `${prefix}${seg(k)}` : k, out);
  } else {
    out.set(prefix || "(root)", v);
  }
  return out;
}

export interface FieldRow {
  path: string;
  change: "added" | "removed" | "changed";
  before?: Json;
  after?: Json;
}

/** Every leaf that differs between a and b, in path order. */
export function fieldRows(a: Json, b: Json): FieldRow[] {
  const fa = flatten(a);
  const fb = flatten(b);
  const paths = [...new Set([...fa.keys(), ...fb.keys()])].sort();
  const rows: FieldRow[] = [];
  for (const p of paths) {
    const inA = fa.has(p);
    const inB = fb.has(p);
    if (inA && !inB) rows.push({ path: p, change: "removed", before: fa.get(p) });
    else if (!inA && inB) rows.push({ path: p, change: "added", after: fb.get(p) });
    else if (JSON.stringify(fa.get(p)) !== JSON.stringify(fb.get(p)))
      rows.push({ path: p, change: "changed", before: fa.get(p), after: fb.get(p) });
  }
  return rows;
}

export interface LineRow {
  left: string | null;
  right: string | null;
  kind: "same" | "change" | "del" | "add";
}

/** The largest middle (lines × lines) diffed exactly; beyond it the middle is shown as one change. */
export const MAX_CELLS = 4_000_000;

/** Side-by-side rows of two texts' lines: common lines aligned, removed left, added right. */
export function sideBySide(aText: string, bText: string): LineRow[] {
  const a = aText === "" ? [] : aText.split("\n");
  const b = bText === "" ? [] : bText.split("\n");
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++;
  let suf = 0;
  while (
    suf < a.length - pre &&
    suf < b.length - pre &&
    a[a.length - 1 - suf] === b[b.length - 1 - suf]
  )
    suf++;
  const am = a.slice(pre, a.length - suf);
  const bm = b.slice(pre, b.length - suf);
  const rows: LineRow[] = a.slice(0, pre).map(l => ({ left: l, right: l, kind: "same" as const }));
  rows.push(...pairUp(am.length * bm.length <= MAX_CELLS ? lcsOps(am, bm) : bulkOps(am, bm)));
  rows.push(...a.slice(a.length - suf).map(l => ({ left: l, right: l, kind: "same" as const })));
  return rows;
}

type Op = { op: "same" | "del" | "add"; line: string };

function bulkOps(a: string[], b: string[]): Op[] {
  return [
    ...a.map(line => ({ op: "del" as const, line })),
    ...b.map(line => ({ op: "add" as const, line })),
  ];
}

// Longest common subsequence by dynamic programming over the (trimmed) middle.
function lcsOps(a: string[], b: string[]): Op[] {
  const n = a.length;
  const m = b.length;
  const w = m + 1;
  const t = new Uint32Array((n + 1) * w);
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      t[i * w + j] =
        a[i] === b[j] ? t[(i + 1) * w + j + 1] + 1 : Math.max(t[(i + 1) * w + j], t[i * w + j + 1]);
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      ops.push({ op: "same", line: a[i] });
      i++;
      j++;
    } else if (t[(i + 1) * w + j] >= t[i * w + j + 1]) ops.push({ op: "del", line: a[i++] });
    else ops.push({ op: "add", line: b[j++] });
  }
  while (i < n) ops.push({ op: "del", line: a[i++] });
  while (j < m) ops.push({ op: "add", line: b[j++] });
  return ops;
}

// A run of removals followed by additions is shown side by side as changed lines.
function pairUp(ops: Op[]): LineRow[] {
  const rows: LineRow[] = [];
  let k = 0;
  while (k < ops.length) {
    if (ops[k].op === "same") {
      rows.push({ left: ops[k].line, right: ops[k].line, kind: "same" });
      k++;
      continue;
    }
    const dels: string[] = [];
    const adds: string[] = [];
    while (k < ops.length && ops[k].op === "del") dels.push(ops[k++].line);
    while (k < ops.length && ops[k].op === "add") adds.push(ops[k++].line);
    const n = Math.max(dels.length, adds.length);
    for (let x = 0; x < n; x++) {
      const l = dels[x] ?? null;
      const r = adds[x] ?? null;
      rows.push({
        left: l,
        right: r,
        kind: l !== null && r !== null ? "change" : l !== null ? "del" : "add",
      });
    }
  }
  return rows;
}

/** Pretty text of an object for the side-by-side view (keys in their recorded order). */
export function prettyText(v: Json): string {
  return v === null || v === undefined ? "" : JSON.stringify(v, null, 2);
}
