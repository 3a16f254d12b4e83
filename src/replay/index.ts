// The replay folder's front door: capabilities, the CLI and the sidecar import replay code from here.
export * from "./replay-plan-cr";
export * from "./gate";
