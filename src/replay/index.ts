// The replay folder's front door: capabilities, the CLI and the sidecar import replay code from here.
export * from "./replay-plan-cr";
export * from "./gate";
export * from "./approval";
export * from "./admission";
export * from "./plan-cache";
export * from "./plan-status";
export * from "./reconcile";
export { PlanClient } from "./plan-client";
export { ReplayRuntime, processReplay } from "./replay-runtime";
// The planner: pure plan building, then dry run and apply against a target (see docs/replay-safety.md).
export * from "./types";
export { policyOf, PolicySchema, SECRET_REASON, type Policy, type PolicyInput } from "./policy";
export { sanitize } from "./sanitize";
export { orderObjects, dependencies, rankOf } from "./order";
export { planDigest, newPlanId } from "./digest";
export { buildPlan, PlanRefused, type PlanInput } from "./plan";
export { planFromJournal, type PlanRequest } from "./from-journal";
export { dryRunPlan, DEFAULT_CONCURRENCY, type DryRunOptions } from "./dry-run";
export { applyPlan, checkApply, ApplyRefused, type ApplyOptions } from "./apply";
export { planParts, publishPlan, readPlanParts, approvalProblem } from "./plan-cr";
export { objectPath, applyPatch, APPLY_PATCH, mapBounded } from "./requests";
export {
  createPlan,
  dryRunStored,
  applyStored,
  approvePlan,
  loadPlan,
  loadDryRun,
  loadApplyRuns,
  type CreatePlanInput,
} from "./service";
