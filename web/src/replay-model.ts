// Replay review: a plan's objects joined with the verdicts of its last dry run, and where the plan
// stands (dry run, approval, apply). A dry run of another digest is stale and says so: its verdicts
// are about a different plan.

export interface PlanRef {
  group: string;
  version: string;
  kind: string;
  resource: string;
  namespace: string;
  name: string;
}

export interface PlanObject {
  ref: PlanRef;
  source: { namespace: string; name: string; resourceVersion: string };
  rank: number;
  warnings: string[];
}

export interface Plan {
  id: string;
  digest: string;
  createdAt: string;
  source: { clusterId: string; at: string; snapshotId: string | null; namespaces: string[] };
  target: { clusterId: string; server?: string; isSource: boolean };
  namespaceMap: Record<string, string>;
  policy: Record<string, unknown>;
  coverageComplete: boolean;
  objects: PlanObject[];
  excluded: { group: string; kind: string; namespace: string; name: string; reason: string }[];
  warnings: string[];
}

export interface Verdict {
  ref: PlanRef;
  verdict: "would-create" | "would-change" | "unchanged" | "conflict" | "rejected" | "error";
  changes?: { path: string; before?: unknown; after?: unknown }[];
  conflicts?: { manager: string; field: string; message: string }[];
  message?: string;
  preflight: string[];
}

export interface DryRun {
  planId: string;
  digest: string;
  at: string;
  ok: boolean;
  counts: Record<string, number>;
  verdicts: Verdict[];
}

export interface ApplyRun {
  runId: string;
  digest: string;
  startedAt: string;
  finishedAt: string;
  ok: boolean;
  applied: number;
  notApplied: number;
  items: { ref: PlanRef; result: string; message?: string }[];
  message?: string;
}

export interface PlanRow {
  object: PlanObject;
  verdict: Verdict | null;
}

const refKey = (r: Pick<PlanRef, "group" | "kind" | "namespace" | "name">) =>
  `${r.group}/${r.kind}/${r.namespace}/${r.name}`;

/** Kind namespace/name, as people read an object. */
export function refText(r: Pick<PlanRef, "kind" | "namespace" | "name">): string {
  return `${r.kind} ${r.namespace ? `${r.namespace}/` : ""}${r.name}`;
}

/** The plan's objects in apply order, each with its verdict from a dry run of this digest. */
export function planRows(plan: Plan, dryRun: DryRun | null): PlanRow[] {
  const current = dryRun && dryRun.digest === plan.digest ? dryRun : null;
  const byRef = new Map((current?.verdicts ?? []).map(v => [refKey(v.ref), v]));
  return plan.objects.map(o => ({ object: o, verdict: byRef.get(refKey(o.ref)) ?? null }));
}

export type DryRunState = "none" | "ok" | "failed" | "stale";

export interface PlanStage {
  dryRun: DryRunState;
  /** The newest apply run of this digest, if any. */
  lastRun: ApplyRun | null;
  /** The apply button is offered only after a dry run of this digest that is ok. */
  canApply: boolean;
}

export function planStage(plan: Plan, dryRun: DryRun | null, runs: ApplyRun[]): PlanStage {
  const state: DryRunState = !dryRun
    ? "none"
    : dryRun.digest !== plan.digest
      ? "stale"
      : dryRun.ok
        ? "ok"
        : "failed";
  const mine = runs.filter(r => r.digest === plan.digest);
  const lastRun =
    mine.length > 0 ? mine.reduce((a, b) => (b.startedAt > a.startedAt ? b : a)) : null;
  return { dryRun: state, lastRun, canApply: state === "ok" };
}

export interface ApprovalView {
  state: "approved" | "applied" | "refused" | "pending" | "unknown";
  text: string;
}

/** GET /v1/replay-plans/{id}/approval: the ReplayPlan parts as the target cluster has them now. */
export interface ClusterApproval {
  approved: boolean;
  problem: string | null;
  parts: {
    name: string;
    approved: boolean;
    expired: boolean;
    approvedBy: string | null;
    approvalExpiresAt: string | null;
  }[];
}

/**
 * Where approval stands. Approval is spec.approved on the plan's ReplayPlan objects in the target,
 * stamped by admission: the sidecar reads them (`cluster`); when it cannot, what the journal shows is
 * used: a successful apply proves the approval stood, a refused one carries the reason.
 */
export function approvalView(
  plan: Plan,
  stage: PlanStage,
  refusal: string | null,
  cluster: ClusterApproval | null,
  clusterError: string | null,
): ApprovalView {
  if (cluster) {
    if (cluster.approved) {
      const who = [...new Set(cluster.parts.map(p => p.approvedBy).filter(Boolean))].join(", ");
      const until = cluster.parts
        .map(p => p.approvalExpiresAt)
        .filter(Boolean)
        .sort()[0];
      return {
        state: "approved",
        text: `approved${who ? ` by ${who}` : ""}${until ? `, until ${until}` : ""}`,
      };
    }
    return { state: "pending", text: `not approved: ${cluster.problem ?? "no approval"}` };
  }
  const unread = clusterError ? ` (the cluster could not be read: ${clusterError})` : "";
  if (stage.lastRun?.ok)
    return {
      state: "applied",
      text: `approved: the apply run ${stage.lastRun.runId} at ${stage.lastRun.startedAt} was allowed${unread}`,
    };
  const why = refusal ?? stage.lastRun?.message ?? null;
  if (why && /approv|expired|ReplayPlan/i.test(why))
    return { state: "refused", text: `not approved: ${why}` };
  return {
    state: "unknown",
    text:
      `unknown${unread}; approve by setting spec.approved on ReplayPlan ${plan.id} ` +
      `(kubectl patch, GitOps or krply replay approve): the apply is refused until every part is approved`,
  };
}

/** Counts of a dry run's verdicts, in a fixed order, for the summary. */
export function verdictCounts(rows: PlanRow[]): [string, number][] {
  const order = ["would-create", "would-change", "unchanged", "conflict", "rejected", "error"];
  const n = new Map<string, number>();
  for (const r of rows)
    if (r.verdict) n.set(r.verdict.verdict, (n.get(r.verdict.verdict) ?? 0) + 1);
  const missing = rows.filter(r => !r.verdict).length;
  const out: [string, number][] = order.filter(k => n.has(k)).map(k => [k, n.get(k)!]);
  if (missing > 0) out.push(["no verdict", missing]);
  return out;
}

/** Parses "shop=restore, a=b" into a namespace map; a malformed pair is an error, not skipped. */
export function parseNamespaceMap(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of text
    .split(",")
    .map(s => s.trim())
    .filter(Boolean)) {
    const m = /^([^=\s]+)=([^=\s]+)$/.exec(part);
    if (!m) throw new Error(`"${part}" is not source=target`);
    out[m[1]] = m[2];
  }
  return out;
}

/** Comma-separated names, trimmed, empty ones dropped. */
export function listOf(text: string): string[] {
  return text
    .split(",")
    .map(s => s.trim())
    .filter(Boolean);
}
