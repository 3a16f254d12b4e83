// Snapshots: their completeness, and what differs between two of them, object by object.
import type { SnapshotSummary } from "../../src/materialize";
import { fieldRows, withoutServerMetadata, type FieldRow } from "./diff-model";

/** A stored snapshot as GET /v1/snapshots lists it: materialize's own type (erased in the build). */
export type { SnapshotSummary };

export interface SnapshotObject {
  kind: string;
  group: string;
  namespace: string;
  name: string;
  object: unknown;
}

export interface ObjectDelta {
  kind: string;
  group: string;
  namespace: string;
  name: string;
  change: "added" | "removed" | "changed";
  fields: FieldRow[];
}

const keyOf = (o: SnapshotObject) => `${o.group}/${o.kind}/${o.namespace}/${o.name}`;

/** Objects added, removed or changed from snapshot a to b (server metadata ignored), in key order. */
export function compareSnapshots(a: SnapshotObject[], b: SnapshotObject[]): ObjectDelta[] {
  const ma = new Map(a.map(o => [keyOf(o), o]));
  const mb = new Map(b.map(o => [keyOf(o), o]));
  const keys = [...new Set([...ma.keys(), ...mb.keys()])].sort();
  const out: ObjectDelta[] = [];
  for (const k of keys) {
    const x = ma.get(k);
    const y = mb.get(k);
    const id = (x ?? y)!;
    const base = { kind: id.kind, group: id.group, namespace: id.namespace, name: id.name };
    if (!y) out.push({ ...base, change: "removed", fields: [] });
    else if (!x) out.push({ ...base, change: "added", fields: [] });
    else {
      const fields = fieldRows(withoutServerMetadata(x.object), withoutServerMetadata(y.object));
      if (fields.length > 0) out.push({ ...base, change: "changed", fields });
    }
  }
  return out;
}

/** Why a snapshot is incomplete, in one line; null when it is complete. */
export function incompleteness(s: SnapshotSummary): string | null {
  if (s.complete) return null;
  const parts: string[] = [];
  if (s.missing.length > 0)
    parts.push(`${s.missing.length} stream${s.missing.length === 1 ? "" : "s"} not covered`);
  if (s.warnings.length > 0)
    parts.push(`${s.warnings.length} warning${s.warnings.length === 1 ? "" : "s"}`);
  return parts.length > 0 ? parts.join(", ") : "incomplete";
}
