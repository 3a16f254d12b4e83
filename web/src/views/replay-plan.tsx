// Reviewing one replay plan: what it was built from (and whether that history was complete), its
// warnings, the objects it would write with each one's dry-run verdict, what it leaves out and why,
// approval, and the apply runs. Dry run and apply each ask for an explicit confirmation.
import { useState } from "preact/hooks";
import { ApiFailure, parsePlain } from "../api-client";
import {
  approvalView,
  planRows,
  planStage,
  type ApplyRun,
  type ClusterApproval,
  type DryRun,
  type Plan,
} from "../replay-model";
import { ConfirmDialog } from "../ui/confirm-dialog";
import { asFailure, useLoad, useShared } from "../ui/context";
import { ErrorBox, Loaded } from "../ui/states";
import { Excluded, Objects, PlanHeader, Warnings } from "./replay-plan-parts";

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
