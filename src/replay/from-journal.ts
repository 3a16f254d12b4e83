import type { JournalView } from "../journal";
import { listSnapshots, resolveCluster, snapshot } from "../materialize";
import { newPlanId } from "./digest";
import { buildPlan } from "./plan";
import { policyOf, type PolicyInput } from "./policy";
import type { Plan, Target } from "./types";

/** What a user asks for: a point in a source cluster's history, the namespaces, and where to. */
export interface PlanRequest {
  /** Source cluster id; default: the only one in the journal. */
  sourceCluster?: string;
  /** A time (ISO) or a stored snapshot id; exactly one. */
  at?: string;
  snapshotId?: string;
  sourceNamespaces: string[];
  target: Target;
  policy?: PolicyInput;
  id?: string;
  now?: Date;
}

/**
 * Plans a replay from the journal. Reads only through materialize: the snapshot at the point gives
 * the objects and each stream's coverage.
 */
export function planFromJournal(view: JournalView, req: PlanRequest): Plan {
  if ((req.at === undefined) === (req.snapshotId === undefined))
    throw new Error("give either a time or a snapshot id to plan from");
  const warnings: string[] = [];
  let clusterId: string;
  let at: string;
  if (req.snapshotId !== undefined) {
    const stored = listSnapshots(view).find(s => s.id === req.snapshotId);
    if (!stored) throw new Error(`no snapshot with id ${req.snapshotId}`);
    clusterId = stored.clusterId;
    at = stored.at;
    if (!stored.complete)
      warnings.push(
        `snapshot ${stored.name} was incomplete when taken: missing ${stored.missing.join(", ")}`,
      );
  } else {
    clusterId = resolveCluster(view, req.sourceCluster);
    at = req.at!;
  }
  // Only the source namespaces and cluster-scoped objects (their Namespaces, CRDs) are rebuilt.
  const sources = new Set(req.sourceNamespaces);
  const snap = snapshot(view, clusterId, at, `replay-plan-${at}`, {
    only: o => o.namespace === "" || sources.has(o.namespace),
  });
  const policy = policyOf(req.policy);
  return buildPlan({
    id: req.id ?? newPlanId(),
    createdAt: (req.now ?? new Date()).toISOString(),
    sourceClusterId: clusterId,
    at: snap.data.at,
    snapshotId: req.snapshotId ?? null,
    sourceNamespaces: req.sourceNamespaces,
    target: req.target,
    policy,
    objects: snap.data.objects,
    streams: snap.data.streams,
    prunedBefore: snap.coverage.prunedBefore,
    warnings,
  });
}
