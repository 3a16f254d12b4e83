import type { FieldChange } from "./field-diff";
import { ownership, parseFieldsV1, type FieldSetNode, type ManagedFieldsEntry } from "./fields-v1";
import { compareTimes } from "./order";
import type { TimelineChange } from "./types";

/** Who wrote a field: a managedFields entry of the later version. */
export interface Attribution {
  manager: string;
  operation: string;
  time: string | null;
  subresource?: string;
  /** How the owner was found: it owns the field itself, an atomic parent of it, or parts of it. */
  basis: "exact" | "ancestor" | "descendant" | "wrote-since";
}

interface ParsedEntry {
  entry: ManagedFieldsEntry;
  tree: FieldSetNode;
}

function entriesOf(object: unknown): ManagedFieldsEntry[] {
  const md = (object as { metadata?: { managedFields?: unknown } } | undefined)?.metadata;
  return Array.isArray(md?.managedFields) ? (md.managedFields as ManagedFieldsEntry[]) : [];
}

function parsed(object: unknown): ParsedEntry[] {
  return entriesOf(object)
    .filter(e => e.fieldsType === undefined || e.fieldsType === "FieldsV1")
    .map(entry => ({ entry, tree: parseFieldsV1(entry.fieldsV1 ?? {}) }));
}

function toAttribution(e: ManagedFieldsEntry, basis: Attribution["basis"]): Attribution {
  const a: Attribution = {
    manager: e.manager ?? "(unknown)",
    operation: e.operation ?? "(unknown)",
    time: e.time ?? null,
    basis,
  };
  if (e.subresource) a.subresource = e.subresource;
  return a;
}

const newestFirst = (a: ParsedEntry, b: ParsedEntry): number =>
  compareTimes(b.entry.time ?? "", a.entry.time ?? "");

const identity = (e: ManagedFieldsEntry): string =>
  `${e.manager ?? ""}\u0000${e.operation ?? ""}\u0000${e.subresource ?? ""}`;

/**
 * Names the managers of a changed field from the later version's managedFields, newest first. A
 * removed field has no owner left, so it goes to the managers whose entries changed since `before`.
 */
export function attributeChange(
  change: FieldChange,
  before: unknown,
  after: unknown,
): Attribution[] {
  return attribute(change, before, after, parsed(after));
}

function attribute(
  change: FieldChange,
  before: unknown,
  after: unknown,
  later: ParsedEntry[],
): Attribution[] {
  if (!change.removed) {
    for (const basis of ["exact", "ancestor", "descendant"] as const) {
      const owners = later
        .filter(p => ownership(p.tree, change.segments, after) === basis)
        .sort(newestFirst);
      if (owners.length > 0) return owners.map(p => toAttribution(p.entry, basis));
    }
  }
  const earlier = new Map(entriesOf(before).map(e => [identity(e), e.time ?? ""]));
  return later
    .filter(p => earlier.get(identity(p.entry)) !== (p.entry.time ?? ""))
    .sort(newestFirst)
    .map(p => toAttribution(p.entry, "wrote-since"));
}

/** Annotates each change with its attribution, as a timeline carries it (see TimelineChange). */
export function attributeTimelineChanges(
  changes: FieldChange[],
  before: unknown,
  after: unknown,
): TimelineChange[] {
  const later = parsed(after);
  return changes.map(c => {
    // Keys in the order of a field change's own (path, added, removed, before, after), then managers.
    const t = { path: c.path } as TimelineChange;
    if (c.added) t.added = true;
    if (c.removed) t.removed = true;
    if (c.before !== undefined) t.before = c.before;
    if (c.after !== undefined) t.after = c.after;
    t.managers = attribute(c, before, after, later);
    return t;
  });
}

/** Annotates each change with its attribution (the first owner is the one to show). */
export function attributeChanges(
  changes: FieldChange[],
  before: unknown,
  after: unknown,
): (FieldChange & { managers: Attribution[] })[] {
  const later = parsed(after);
  return changes.map(c => ({ ...c, managers: attribute(c, before, after, later) }));
}
