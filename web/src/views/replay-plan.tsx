// Reviewing one replay plan: what it was built from (and whether that history was complete), its
// warnings, the objects it would write with each one's dry-run verdict, what it leaves out and why,
// approval, and the apply runs. Dry run and apply each ask for an explicit confirmation.
import { useState } from "preact/hooks";
import { ApiFailure, parsePlain } from "../api-client";
import {
  approvalView,
  planRows,
  planStage,
  refText,
  verdictCounts,
  type ApplyRun,
  type ClusterApproval,
  type DryRun,
  type Plan,
  type PlanRow,
} from "../replay-model";
import { valueText } from "../timeline-model";
import { ConfirmDialog } from "../ui/confirm-dialog";
import { asFailure, useLoad, useShared } from "../ui/context";
import { Empty, ErrorBox, Loaded } from "../ui/states";

interface Stored {
  plan: Plan;
  dryRun: DryRun | null;
  runs: ApplyRun[];
}

type Pending = "dry-run" | "apply" | null;

export function PlanReview({ id }: { id: string }) {
  const { api } = useShared();
  const [refresh, setRefresh] = useState(0);
  const [asking, setAsking] = useState<Pending>(null);
  const [working, setWorking] = useState(false);
  const [actionError, setActionError] = useState<ApiFailure | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const load = useLoad<Stored>(
    JSON.stringify([id, refresh]),
    async (a, signal) =>
      parsePlain<Stored>(await a.get(`/v1/replay-plans/${encodeURIComponent(id)}`, {}, signal))
        .data,
  );
  // Approval lives in the target cluster; a failure to read it is shown, not hidden.
  const approvalLoad = useLoad<ClusterApproval>(
    JSON.stringify([id, refresh, "approval"]),
    async (a, signal) =>
      parsePlain<ClusterApproval>(
        await a.get(`/v1/replay-plans/${encodeURIComponent(id)}/approval`, {}, signal),
      ).data,
  );
  const act = async (what: Exclude<Pending, null>) => {
    setWorking(true);
    setActionError(null);
    setNotice(null);
    try {
      if (what === "dry-run") {
        const r = parsePlain<DryRun>(
          await api.post(`/v1/replay-plans/${encodeURIComponent(id)}/dry-run`, {}),
        );
        setNotice(`Dry run finished: ${r.data.ok ? "ok" : "not ok"}.${warn(r.warnings)}`);
      } else {
        const r = parsePlain<ApplyRun>(
          await api.post("/v1/replay-runs", { plan: id, confirm: true }),
        );
        setNotice(
          `Apply ${r.data.ok ? "finished" : "failed"}: ${r.data.applied} applied, ${r.data.notApplied} not applied.${warn(r.warnings)}`,
        );
      }
      setAsking(null);
      setRefresh(n => n + 1);
    } catch (err) {
      setAsking(null);
      setActionError(asFailure(err));
    } finally {
      setWorking(false);
    }
  };
  return (
    <Loaded load={load} what="the plan">
      {s => {
        const stage = planStage(s.plan, s.dryRun, s.runs);
        const rows = planRows(s.plan, s.dryRun);
        const approval = approvalView(
          s.plan,
          stage,
          actionError?.code === "unanswerable" ? actionError.message : null,
          approvalLoad?.status === "ok" ? approvalLoad.value : null,
          approvalLoad?.status === "error" ? approvalLoad.error.message : null,
        );
        return (
          <>
            <PlanHeader plan={s.plan} />
            <section aria-labelledby="stage-title">
              <h2 id="stage-title">Status</h2>
              <ul>
                <li data-testid="dry-run-status" data-state={stage.dryRun}>
                  Dry run: {dryRunText(stage.dryRun, s.dryRun)}
                </li>
                <li data-testid="approval-status" data-state={approval.state}>
                  Approval:{" "}
                  {approvalLoad?.status === "loading"
                    ? "reading the ReplayPlan objects…"
                    : approval.text}
                </li>
                <li data-testid="apply-status">
                  Apply:{" "}
                  {stage.lastRun
                    ? `${stage.lastRun.ok ? "applied" : "failed"} at ${stage.lastRun.startedAt} (${stage.lastRun.applied} applied, ${stage.lastRun.notApplied} not applied)${stage.lastRun.message ? `: ${stage.lastRun.message}` : ""}`
                    : "not applied"}
                </li>
              </ul>
              <div class="actions">
                <button type="button" onClick={() => setAsking("dry-run")}>
                  Dry run…
                </button>
                <button
                  type="button"
                  class="danger"
                  disabled={!stage.canApply}
                  onClick={() => setAsking("apply")}
                >
                  Apply…
                </button>
                {!stage.canApply && (
                  <span class="muted">Apply needs an ok dry run of this plan's digest.</span>
                )}
              </div>
              <div aria-live="polite">{notice && <p data-testid="action-result">{notice}</p>}</div>
              {actionError && <ErrorBox error={actionError} what={asking ?? "the action"} />}
            </section>
            <Warnings plan={s.plan} />
            <Objects rows={rows} />
            <Excluded plan={s.plan} />
            {asking === "dry-run" && (
              <ConfirmDialog
                title="Dry-run this plan?"
                confirmLabel="Confirm dry run"
                busy={working}
                onCancel={() => setAsking(null)}
                onConfirm={() => void act("dry-run")}
              >
                <p>
                  Sends each of the {s.plan.objects.length} objects to cluster{" "}
                  <strong>{s.plan.target.clusterId}</strong> as a server-side apply with dryRun=All.
                  Nothing is persisted in the cluster; the verdicts are recorded in the journal and
                  on the ReplayPlan.
                </p>
              </ConfirmDialog>
            )}
            {asking === "apply" && (
              <ConfirmDialog
                title="Apply this plan?"
                confirmLabel="Confirm apply"
                danger
                busy={working}
                onCancel={() => setAsking(null)}
                onConfirm={() => void act("apply")}
              >
                <p>
                  Writes {s.plan.objects.length} objects to cluster{" "}
                  <strong>{s.plan.target.clusterId}</strong> (digest{" "}
                  <code>{s.plan.digest.slice(0, 19)}…</code>). The sidecar refuses unless the last
                  dry run of this digest is ok and every ReplayPlan part is approved.
                </p>
              </ConfirmDialog>
            )}
          </>
        );
      }}
    </Loaded>
  );
}

function warn(ws: string[]): string {
  return ws.length > 0 ? ` Warnings: ${ws.join("; ")}` : "";
}

function dryRunText(state: string, d: DryRun | null): string {
  if (!d || state === "none") return "not run yet";
  const counts = Object.entries(d.counts)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${n} ${k}`)
    .join(", ");
  if (state === "stale") return `the last dry run (${d.at}) was of another digest; run it again`;
  return `${state === "ok" ? "ok" : "not ok"} at ${d.at}${counts ? ` (${counts})` : ""}`;
}

function PlanHeader({ plan }: { plan: Plan }) {
  const map = Object.entries(plan.namespaceMap);
  return (
    <section aria-labelledby="plan-title" data-testid="plan-summary">
      <h2 id="plan-title">Plan</h2>
      {!plan.coverageComplete && (
        <p class="coverage-banner partial" data-testid="coverage-banner" data-complete="false">
          <span class="badge bad">Incomplete</span> This plan was built from history with gaps: some
          objects may be missing or stale. See the warnings.
        </p>
      )}
      {plan.coverageComplete && (
        <p class="coverage-banner complete" data-testid="coverage-banner" data-complete="true">
          <span class="badge ok">Complete</span> Built from history without gaps.
        </p>
      )}
      <dl class="cards">
        <div class="card">
          <dt>Source</dt>
          <dd>
            {plan.source.clusterId} at <time>{plan.source.at}</time>
            {plan.source.snapshotId ? ` (snapshot ${plan.source.snapshotId})` : ""}
          </dd>
        </div>
        <div class="card">
          <dt>Namespaces</dt>
          <dd>
            {map.length > 0
              ? map.map(([a, b]) => `${a} → ${b}`).join(", ")
              : plan.source.namespaces.join(", ")}
          </dd>
        </div>
        <div class="card">
          <dt>Target</dt>
          <dd>
            {plan.target.clusterId}
            {plan.target.isSource ? " (the source cluster itself)" : ""}
          </dd>
        </div>
        <div class="card">
          <dt>Digest</dt>
          <dd>
            <code>{plan.digest.slice(0, 23)}…</code>
          </dd>
        </div>
      </dl>
    </section>
  );
}

function Warnings({ plan }: { plan: Plan }) {
  return (
    <section aria-labelledby="warnings-title" data-testid="plan-warnings">
      <h2 id="warnings-title">Warnings ({plan.warnings.length})</h2>
      {plan.warnings.length === 0 ? (
        <Empty>The plan has no warnings.</Empty>
      ) : (
        <ul>
          {plan.warnings.map((w, i) => (
            <li key={i}>{w}</li>
          ))}
        </ul>
      )}
    </section>
  );
}

function Objects({ rows }: { rows: PlanRow[] }) {
  const counts = verdictCounts(rows);
  return (
    <section aria-labelledby="objects-title">
      <h2 id="objects-title">Objects ({rows.length}) and dry-run verdicts</h2>
      {counts.length > 0 && <p>{counts.map(([k, n]) => `${n} ${k}`).join(", ")}</p>}
      {rows.length === 0 ? (
        <Empty>The plan writes no object.</Empty>
      ) : (
        <div class="table-wrap">
          <table data-testid="plan-objects">
            <thead>
              <tr>
                <th scope="col">#</th>
                <th scope="col">Object (in the target)</th>
                <th scope="col">From (source RV)</th>
                <th scope="col">Dry-run verdict</th>
                <th scope="col">Details</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r, i) => (
                <tr
                  key={i}
                  data-testid="verdict"
                  data-verdict={r.verdict?.verdict ?? "none"}
                  data-object={refText(r.object.ref)}
                >
                  <td>{i + 1}</td>
                  <th scope="row">{refText(r.object.ref)}</th>
                  <td>
                    {r.object.source.namespace}/{r.object.source.name} @{" "}
                    {r.object.source.resourceVersion}
                  </td>
                  <td>
                    <span class={`badge ${verdictClass(r.verdict?.verdict)}`}>
                      {r.verdict?.verdict ?? "not dry-run"}
                    </span>
                  </td>
                  <td>
                    <Details row={r} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function verdictClass(v: string | undefined): string {
  if (v === "would-create" || v === "unchanged" || v === "would-change") return "ok";
  if (v === "conflict" || v === "rejected" || v === "error") return "bad";
  return "";
}

function Details({ row }: { row: PlanRow }) {
  const v = row.verdict;
  const notes = [...row.object.warnings, ...(v?.preflight ?? [])];
  return (
    <>
      {v?.message && <p>{v.message}</p>}
      {v?.changes && v.changes.length > 0 && (
        <ul aria-label="Fields that would change">
          {v.changes.map(c => (
            <li key={c.path}>
              <code>{c.path}</code>: {valueText(c.before)} → {valueText(c.after)}
            </li>
          ))}
        </ul>
      )}
      {v?.conflicts && v.conflicts.length > 0 && (
        <ul aria-label="Conflicts">
          {v.conflicts.map((c, i) => (
            <li key={i}>
              <code>{c.field}</code> owned by {c.manager}: {c.message}
            </li>
          ))}
        </ul>
      )}
      {notes.length > 0 && (
        <ul aria-label="Warnings">
          {notes.map((n, i) => (
            <li key={i}>{n}</li>
          ))}
        </ul>
      )}
    </>
  );
}

function Excluded({ plan }: { plan: Plan }) {
  return (
    <section aria-labelledby="excluded-title" data-testid="plan-excluded">
      <h2 id="excluded-title">Left out ({plan.excluded.length})</h2>
      {plan.excluded.length === 0 ? (
        <Empty>The policy left nothing out.</Empty>
      ) : (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Object</th>
                <th scope="col">Why</th>
              </tr>
            </thead>
            <tbody>
              {plan.excluded.map((x, i) => (
                <tr key={i} data-testid="excluded-row">
                  <th scope="row">{refText(x)}</th>
                  <td>{x.reason}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
