import { Counter, Gauge, Registry } from "prom-client";

/** Outcomes of an audit line or webhook item, as counted. */
export const AUDIT_RESULTS = [
  "matched",
  "malformed",
  "huge",
  "ignored",
  "unmatched",
  "duplicate",
] as const;
export type AuditResult = (typeof AUDIT_RESULTS)[number];

/** Audit ingestion instruments, on a registry of their own unless one is given. */
export class AuditMetrics {
  readonly lines: Counter<"source" | "result">;
  readonly pending: Gauge;
  readonly rotations: Counter;

  /** Pass the process's registry (the recorder's) to serve these beside its metrics. */
  constructor(readonly registry: Registry = new Registry()) {
    this.lines = new Counter({
      name: "krply_audit_events_total",
      help: "Audit events read (log lines or webhook items), by outcome: matched, malformed, huge, ignored (reads, failed or body-less requests), unmatched (no recorded change in the window), duplicate",
      labelNames: ["source", "result"] as const,
      registers: [registry],
    });
    this.pending = new Gauge({
      name: "krply_audit_pending",
      help: "Audit events waiting for their watch event to be recorded",
      registers: [registry],
    });
    this.rotations = new Counter({
      name: "krply_audit_log_rotations_total",
      help: "Rotations of the followed audit log",
      registers: [registry],
    });
  }
}
