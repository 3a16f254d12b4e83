// The parts of a replay plan's review that only show the plan: its summary and coverage, warnings,
// objects with their dry-run verdicts, and what the policy left out.
import { refText, verdictCounts, type Plan, type PlanRow } from "../replay-model";
import { valueText } from "../timeline-model";
import { Empty } from "../ui/states";

export function PlanHeader({ plan }: { plan: Plan }) {
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

export function Warnings({ plan }: { plan: Plan }) {
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

export function Objects({ rows }: { rows: PlanRow[] }) {
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

export function Excluded({ plan }: { plan: Plan }) {
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
