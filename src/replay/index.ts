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
