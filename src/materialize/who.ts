import type { JournalRecord } from "../event";
import type { JournalView } from "../journal";
import { actorLabel, actorOf, type Actor } from "./actor";
import { answer, coverageOf, type Answer } from "./answer";
import { warn } from "./warnings";

/** Which changes `who` looks at. */
export interface WhoQuery {
  namespace?: string;
  since: string;
  until?: string;
  /** Changes read at most; the answer says when there were more. */
  limit?: number;
}

/** One recorded change and its actor. */
export interface ActorChange {
  observedAt: string;
  kind: string;
  namespace: string;
  name: string;
  resourceVersion: string;
  watchType: string;
  streamId: string;
}

/** The changes of one actor. */
export interface ActorChanges {
  actor: Actor;
  label: string;
  changes: ActorChange[];
}

const PAGE = 1000;
const DEFAULT_LIMIT = 10_000;

/**
 * Recorded changes in a window, grouped by who made them: the audit user when an audit event was
 * correlated, else the field manager from managedFields. The question asked after an incident.
 */
export function changesByActor(
  view: JournalView,
  clusterId: string,
  q: WhoQuery,
): Answer<ActorChanges[]> {
  const limit = q.limit ?? DEFAULT_LIMIT;
  const groups = new Map<string, ActorChanges>();
  // The previous version of each object seen so far in the window, for managedFields attribution.
  const previous = new Map<string, unknown>();
  const warnings: string[] = [];
  let cursor: string | undefined;
  let read = 0;
  do {
    const page = view.events({
      clusterId,
      namespace: q.namespace,
      since: q.since,
      until: q.until,
      types: ["event"],
      limit: Math.min(PAGE, limit - read),
      cursor,
    });
    const changes = page.records.filter(
      (r): r is JournalRecord & { resource: NonNullable<JournalRecord["resource"]> } =>
        r.resource !== undefined && r.watchType !== "ERROR" && r.watchType !== "BOOKMARK",
    );
    const audits = view.auditCorrelations(
      changes.map(r => ({
        streamId: r.streamId,
        observedAt: r.observedAt,
        resourceVersion: r.resource.resourceVersion,
        uid: r.resource.uid,
      })),
    );
    changes.forEach((r, i) => {
      const res = r.resource;
      const objectKey = `${res.group}/${res.kind}/${res.namespace}/${res.name}`;
      const actor = actorOf(r, previous.get(objectKey), audits[i]);
      previous.set(objectKey, r.watchType === "DELETED" ? undefined : r.object);
      const label = actorLabel(actor);
      const groupKey = `${actor.source}\u0000${label}`;
      let g = groups.get(groupKey);
      if (!g) {
        g = { actor, label, changes: [] };
        groups.set(groupKey, g);
      }
      g.changes.push({
        observedAt: r.observedAt,
        kind: res.kind,
        namespace: res.namespace,
        name: res.name,
        resourceVersion: res.resourceVersion,
        watchType: r.watchType ?? "",
        streamId: r.streamId,
      });
    });
    read += page.records.length;
    cursor = page.nextCursor ?? undefined;
  } while (cursor && read < limit);
  if (cursor) warnings.push(warn.truncated(limit));
  const since = Date.parse(q.since);
  const until = q.until ? Date.parse(q.until) : Date.now();
  const gaps = view.gapWindows(undefined, { fromMs: since, toMs: until });
  const data = [...groups.values()].sort((a, b) => b.changes.length - a.changes.length);
  return answer(data, coverageOf(gaps, view.prunedBefore()), warnings);
}
