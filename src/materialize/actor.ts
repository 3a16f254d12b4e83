import type { JournalRecord } from "../event";
import type { ManagedFieldsEntry } from "./fields-v1";
import { compareTimes } from "./order";

/** Who made a recorded change, and how krply knows it. */
export type Actor =
  | {
      /** The API server's audit log named the request. */
      source: "audit";
      user: string;
      impersonatedUser?: string;
      userAgent?: string;
      sourceIPs?: string[];
      verb: string;
      auditId: string;
    }
  | {
      /** The object's managedFields name the writer: a field manager, not a person. */
      source: "managedFields";
      manager: string;
      operation: string;
      time: string | null;
      subresource?: string;
    }
  | {
      /** Neither source says: a delete without an audit event, or an object without managedFields. */
      source: "unknown";
      reason: string;
    };

const STAGE_RANK: Record<string, number> = {
  ResponseComplete: 0,
  Panic: 1,
  ResponseStarted: 2,
  RequestReceived: 3,
};

function entriesOf(object: unknown): ManagedFieldsEntry[] {
  const md = (object as { metadata?: { managedFields?: unknown } } | undefined)?.metadata;
  return Array.isArray(md?.managedFields) ? (md.managedFields as ManagedFieldsEntry[]) : [];
}

const entryKey = (e: ManagedFieldsEntry): string =>
  `${e.manager ?? ""}\u0000${e.operation ?? ""}\u0000${e.subresource ?? ""}`;

// Versions share unchanged managedFields entries, so each distinct FieldsV1 object is walked once.
const ownedSets = new WeakMap<object, Set<string>>();

/** Every field path an entry owns, flattened (read-only: the set is shared). */
function ownedPathsOf(fields: unknown): Set<string> {
  if (!fields || typeof fields !== "object") return new Set();
  let set = ownedSets.get(fields);
  if (!set) ownedSets.set(fields, (set = ownedPaths(fields)));
  return set;
}

function ownedPaths(fields: unknown, prefix = "", out = new Set<string>()): Set<string> {
  if (fields && typeof fields === "object") {
    for (const [k, v] of Object.entries(fields as Record<string, unknown>)) {
      const path = `${prefix}/${k}`;
      out.add(path);
      ownedPaths(v, path, out);
    }
  }
  return out;
}

/**
 * Whether this version's write was by the entry: it is new, it took a field it did not own, or its
 * time moved without losing fields. An entry that only lost fields lost them to another manager's
 * write (the API server may restamp it then); managedFields times have one-second resolution, so a
 * second write within the same second shows only in the fields.
 */
function wrote(e: ManagedFieldsEntry, prev: ManagedFieldsEntry | undefined): boolean {
  if (!prev) return true;
  if (prev.fieldsV1 === e.fieldsV1) return (prev.time ?? "") !== (e.time ?? "");
  const was = ownedPathsOf(prev.fieldsV1);
  const is = ownedPathsOf(e.fieldsV1);
  const gained = [...is].some(p => !was.has(p));
  const lost = [...was].some(p => !is.has(p));
  return gained || (!lost && (prev.time ?? "") !== (e.time ?? ""));
}

/** The actor from audit correlations: the completed stage speaks for its request. */
export function actorFromAudit(correlations: readonly JournalRecord[]): Actor | null {
  const audits = correlations.filter(c => c.audit).map(c => c.audit!);
  if (audits.length === 0) return null;
  audits.sort((a, b) => (STAGE_RANK[a.stage] ?? 9) - (STAGE_RANK[b.stage] ?? 9));
  const a = audits[0];
  const actor: Actor = { source: "audit", user: a.user, verb: a.verb, auditId: a.auditId };
  if (a.impersonatedUser) actor.impersonatedUser = a.impersonatedUser;
  if (a.userAgent !== undefined) actor.userAgent = a.userAgent;
  if (a.sourceIPs) actor.sourceIPs = a.sourceIPs;
  return actor;
}

/**
 * The actor from managedFields: the entry this version wrote, i.e. the newest entry that is new or
 * changed (time or owned fields) since the previous version (any newest entry when the previous
 * version is unknown).
 */
export function actorFromManagedFields(
  watchType: string | null,
  object: unknown,
  previous: unknown,
): Actor {
  if (watchType === "DELETED")
    return {
      source: "unknown",
      reason: "a delete writes no managedFields entry; only an audit log names who deleted",
    };
  const now = entriesOf(object);
  const before = new Map(entriesOf(previous).map(e => [entryKey(e), e]));
  const changed = previous === undefined ? now : now.filter(e => wrote(e, before.get(entryKey(e))));
  const pool = changed.length > 0 ? changed : now;
  if (pool.length === 0) return { source: "unknown", reason: "the object has no managedFields" };
  const e = [...pool].sort((a, b) => compareTimes(b.time ?? "", a.time ?? ""))[0];
  const actor: Actor = {
    source: "managedFields",
    manager: e.manager ?? "(unknown)",
    operation: e.operation ?? "(unknown)",
    time: e.time ?? null,
  };
  if (e.subresource) actor.subresource = e.subresource;
  return actor;
}

/** The actor of a change: audit when correlated, else managedFields. */
export function actorOf(
  record: JournalRecord,
  previous: unknown,
  correlations: readonly JournalRecord[],
): Actor {
  return (
    actorFromAudit(correlations) ??
    actorFromManagedFields(record.watchType ?? null, record.object, previous)
  );
}

/** A one-line label of an actor, for tables. */
export function actorLabel(a: Actor): string {
  if (a.source === "audit") {
    const as = a.impersonatedUser ? ` as ${a.impersonatedUser}` : "";
    return `${a.user}${as}`;
  }
  if (a.source === "managedFields") return `${a.manager} (${a.operation})`;
  return "(unknown)";
}
