import type { PathSegment } from "./path";

/** A managedFields entry as the API server writes it. */
export interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  apiVersion?: string;
  time?: string;
  fieldsType?: string;
  fieldsV1?: Record<string, unknown>;
  subresource?: string;
}

/** One FieldsV1 key: a field, a list item by key fields, a set item by value, an index, or the node itself. */
export type FieldsV1Key =
  | { kind: "field"; name: string }
  | { kind: "key"; fields: Record<string, unknown> }
  | { kind: "value"; value: unknown }
  | { kind: "index"; index: number }
  | { kind: "self" };

/** Parses one FieldsV1 key such as `f:spec`, `k:{"name":"app"}`, `v:"x"`, `i:3` or `.`. */
export function parseFieldsV1Key(raw: string): FieldsV1Key {
  if (raw === ".") return { kind: "self" };
  const tag = raw.slice(0, 2);
  const rest = raw.slice(2);
  try {
    switch (tag) {
      case "f:":
        return { kind: "field", name: rest };
      case "k:": {
        const fields = JSON.parse(rest) as unknown;
        if (typeof fields !== "object" || fields === null || Array.isArray(fields))
          throw new Error("key selector is not a JSON object");
        return { kind: "key", fields: fields as Record<string, unknown> };
      }
      case "v:":
        return { kind: "value", value: JSON.parse(rest) as unknown };
      case "i:": {
        const index = Number(rest);
        if (!Number.isInteger(index) || index < 0) throw new Error("index is not a whole number");
        return { kind: "index", index };
      }
    }
  } catch (err) {
    throw new Error(`malformed FieldsV1 key ${JSON.stringify(raw)}`, { cause: err });
  }
  throw new Error(`unknown FieldsV1 key ${JSON.stringify(raw)}`);
}

/** A parsed FieldsV1 tree: `owned` means the manager owns this node itself (a leaf or a `.` entry). */
export interface FieldSetNode {
  owned: boolean;
  children: { key: FieldsV1Key; node: FieldSetNode }[];
}

// Versions of one object share their unchanged managedFields entries (shared-versions.ts), so a
// timeline parses each distinct FieldsV1 object once. Trees are only read, never changed.
const parsedTrees = new WeakMap<object, FieldSetNode>();

/** Parses a whole FieldsV1 object into a tree; an empty object marks an owned leaf. */
export function parseFieldsV1(fields: unknown): FieldSetNode {
  if (typeof fields !== "object" || fields === null || Array.isArray(fields)) {
    throw new Error(`FieldsV1 must be an object, got ${JSON.stringify(fields)}`);
  }
  let tree = parsedTrees.get(fields);
  if (!tree) parsedTrees.set(fields, (tree = parseTree(fields)));
  return tree;
}

function parseTree(fields: object): FieldSetNode {
  const entries = Object.entries(fields as Record<string, unknown>);
  const node: FieldSetNode = { owned: entries.length === 0, children: [] };
  for (const [raw, child] of entries) {
    const key = parseFieldsV1Key(raw);
    if (key.kind === "self") node.owned = true;
    else node.children.push({ key, node: parseFieldsV1(child) });
  }
  return node;
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Does a FieldsV1 key name the list item `item` at `index` (within the concrete list)? */
function keyMatchesItem(key: FieldsV1Key, item: unknown, index: number): boolean {
  if (key.kind === "index") return key.index === index;
  if (key.kind === "value") return sameJson(key.value, item);
  if (key.kind === "key") {
    if (!isRecord(item)) return false;
    return Object.entries(key.fields).every(([k, v]) => sameJson(item[k], v));
  }
  return false;
}

/** Where a path ends up in a FieldsV1 tree. */
export type Ownership = "exact" | "ancestor" | "descendant" | "none";

/**
 * Says whether a FieldsV1 tree owns the value at `path` of `object`: the node itself, an atomic
 * ancestor (a leaf above the path), or only parts below it. List steps are resolved against the object.
 */
export function ownership(
  tree: FieldSetNode,
  path: readonly PathSegment[],
  object: unknown,
): Ownership {
  let node = tree;
  let value: unknown = object;
  for (const seg of path) {
    let next: FieldSetNode | undefined;
    let nextValue: unknown;
    if (typeof seg === "string") {
      next = node.children.find(c => c.key.kind === "field" && c.key.name === seg)?.node;
      nextValue = isRecord(value) ? value[seg] : undefined;
    } else {
      const list = Array.isArray(value) ? value : [];
      const index =
        typeof seg === "number"
          ? seg
          : list.findIndex(it => isRecord(it) && sameJson(it[seg.key], seg.value));
      nextValue = index >= 0 ? list[index] : undefined;
      next =
        index >= 0
          ? node.children.find(c => keyMatchesItem(c.key, nextValue, index))?.node
          : undefined;
    }
    if (!next) return node.owned && node.children.length === 0 ? "ancestor" : "none";
    node = next;
    value = nextValue;
  }
  if (node.owned) return "exact";
  return node.children.length > 0 ? "descendant" : "none";
}
