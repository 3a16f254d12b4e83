// Turns what a person typed (a cluster, "deploy", "Deployments") into what the journal recorded.
import type { JournalView } from "../journal";
import { ALIASES } from "../kube/aliases";

/** The cluster to answer for: the one wanted, or the only cluster the journal holds. */
export function resolveCluster(view: JournalView, wanted: string | undefined): string {
  const clusters = [...new Set(view.streams().map(s => s.key.clusterId))].sort();
  if (wanted) {
    if (!clusters.includes(wanted)) {
      throw new Error(
        `cluster "${wanted}" is not in the journal (have: ${clusters.join(", ") || "none"})`,
      );
    }
    return wanted;
  }
  if (clusters.length === 1) return clusters[0];
  if (clusters.length === 0) throw new Error(`journal ${view.path} has no recorded streams yet`);
  throw new Error(`journal holds several clusters (${clusters.join(", ")}); pass --cluster`);
}

/** Whether a recorded kind is what someone typed: its name, plural, or a kubectl short name. */
export function kindMatches(kind: string, typed: string): boolean {
  const lower = typed.toLowerCase();
  const want = ALIASES[lower] ?? lower;
  const kl = kind.toLowerCase();
  return kl === want || `${kl}s` === want || `${kl}es` === want || kl.replace(/y$/, "ies") === want;
}

/** Maps what a user typed (deploy, deployments, Deployment) to a kind the journal recorded. */
export function resolveKind(view: JournalView, clusterId: string, typed: string): string {
  const kinds = view.kinds(clusterId);
  const hit = kinds.find(k => kindMatches(k, typed));
  if (!hit) {
    throw new Error(
      `kind "${typed}" was never recorded in cluster ${clusterId} (have: ${kinds.join(", ") || "none"})`,
    );
  }
  return hit;
}

/** The one kind a stream recorded (a stream lists one resource). */
export function kindOfStream(view: JournalView, streamId: string): string {
  const kinds = view.kindsOfStream(streamId);
  if (kinds.length !== 1) {
    throw new Error(
      `stream ${streamId} recorded ${kinds.length === 0 ? "no objects" : `kinds ${kinds.join(", ")}`}; pass a kind`,
    );
  }
  return kinds[0];
}

/** The one stream that recorded an object, for resourceVersions (only meaningful within a stream). */
export function soleStream(
  view: JournalView,
  clusterId: string,
  sel: { kind: string; namespace: string; name: string; group?: string },
): string {
  const ids = view
    .objects(clusterId, sel.namespace)
    .filter(o => o.kind === sel.kind && o.name === sel.name)
    .filter(o => sel.group === undefined || o.group === sel.group);
  const streams = [...new Set(ids.flatMap(o => view.streamsOfObject(o)))];
  if (streams.length !== 1) {
    throw new Error(
      `a resourceVersion is only meaningful within one stream; ${sel.kind} ${sel.name} was recorded on ${streams.length} streams, pass one`,
    );
  }
  return streams[0];
}
