import type { JournalView, ReplayStore } from "../journal";
import type { KubeClient } from "../kube/client";
import { logger } from "../log/logger";
import { clusterIdentity } from "../watch/cluster-identity";
import { applyPlan, type ApplyOptions } from "./apply";
import { dryRunPlan, type DryRunOptions } from "./dry-run";
import { planFromJournal, type PlanRequest } from "./from-journal";
import { publishPlan, readPlanParts, writeApplyStatus, writeDryRunStatus } from "./plan-cr";
import { REPLAY_PLANS_PATH, type ReplayPlan } from "./replay-plan-cr";
import {
  ApplyRunSchema,
  DryRunSchema,
  PlanSchema,
  type ApplyRun,
  type DryRun,
  type Plan,
} from "./types";

const log = logger("replay");

/** A stored plan, parsed at the boundary. */
export function loadPlan(store: ReplayStore, id: string): Plan {
  const stored = store.plan(id);
  if (!stored) throw new Error(`no replay plan ${id} in the journal`);
  return PlanSchema.parse(stored.body);
}

/** The newest dry run of a plan, or null. */
export function loadDryRun(store: ReplayStore, id: string): DryRun | null {
  const r = store.latestDryRun(id);
  return r ? DryRunSchema.parse(r.body) : null;
}

export function loadApplyRuns(store: ReplayStore, id: string): ApplyRun[] {
  return store.applyRuns(id).map(r => ApplyRunSchema.parse(r.body));
}

export interface CreatePlanInput extends Omit<PlanRequest, "target"> {
  /** The user named the source cluster as the target on purpose. */
  intoSourceCluster?: boolean;
}

/**
 * Plans a replay into the cluster the client reaches: its identity becomes the plan's target, the
 * body goes into the journal and the summary (ReplayPlan parts) into the target, for approval.
 */
export async function createPlan(
  view: JournalView,
  store: ReplayStore,
  target: KubeClient,
  input: CreatePlanInput,
): Promise<{ plan: Plan; parts: ReplayPlan[] }> {
  const id = await clusterIdentity(target);
  const plan = planFromJournal(view, {
    ...input,
    target: {
      clusterId: id.clusterId,
      server: id.server,
      isSource: input.intoSourceCluster ?? false,
    },
  });
  store.savePlan({
    id: plan.id,
    createdAt: plan.createdAt,
    digest: plan.digest,
    sourceCluster: plan.source.clusterId,
    targetCluster: plan.target.clusterId,
    body: plan,
  });
  const parts = await publishPlan(target, plan);
  log.info(
    { plan: plan.id, objects: plan.objects.length, parts: parts.length },
    "replay plan created",
  );
  return { plan, parts };
}

/** Dry-runs a stored plan, stores the verdicts and writes the counts into the ReplayPlan status. */
export async function dryRunStored(
  store: ReplayStore,
  target: KubeClient,
  id: string,
  opts: DryRunOptions = {},
): Promise<{ dryRun: DryRun; statusProblems: string[] }> {
  const plan = loadPlan(store, id);
  const dryRun = await dryRunPlan(target, plan, opts);
  store.saveDryRun(plan.id, dryRun.digest, dryRun.at, dryRun.ok, dryRun);
  const statusProblems = await writeDryRunStatus(target, dryRun);
  log.info({ plan: id, ok: dryRun.ok, counts: dryRun.counts }, "replay dry run");
  return { dryRun, statusProblems };
}

/** Applies a stored plan (see applyPlan for every check), stores the run and writes the status. */
export async function applyStored(
  store: ReplayStore,
  target: KubeClient,
  id: string,
  opts: ApplyOptions,
): Promise<{ run: ApplyRun; statusProblems: string[] }> {
  const plan = loadPlan(store, id);
  const run = await applyPlan(target, plan, loadDryRun(store, id), opts);
  store.saveApplyRun(run.runId, plan.id, run.finishedAt, run.ok, run);
  const statusProblems = await writeApplyStatus(target, run);
  log.info(
    { plan: id, ok: run.ok, applied: run.applied, notApplied: run.notApplied },
    "replay apply",
  );
  return { run, statusProblems };
}

/**
 * Approves every part of a plan: a Kubernetes write of spec.approved, so RBAC on replayplans decides
 * who may, and krply's admission webhook stamps who did. Returns the parts as the server left them.
 */
export async function approvePlan(target: KubeClient, id: string): Promise<ReplayPlan[]> {
  const parts = await readPlanParts(target, id);
  if (parts.length === 0) throw new Error(`no ReplayPlan object for plan ${id} in the target`);
  for (const p of parts) {
    await target.json(`${REPLAY_PLANS_PATH}/${p.metadata.name}`, {
      method: "PATCH",
      body: { spec: { approved: true } },
      contentType: "application/merge-patch+json",
    });
  }
  return readPlanParts(target, id);
}
