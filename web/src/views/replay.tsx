// Replay: the stored plans; `new=true` builds one; `plan=<id>` reviews one (replay-plan.tsx).
import { parsePlain } from "../api-client";
import { hrefOf, type RouteState } from "../route-state";
import { useLoad } from "../ui/context";
import { Empty, Loaded } from "../ui/states";
import { NewPlan } from "./replay-new";
import { PlanReview } from "./replay-plan";

interface PlanSummary {
  id: string;
  createdAt: string;
  digest: string;
  sourceCluster: string;
  targetCluster: string;
  objects: number;
}

export function ReplayView({ route }: { route: RouteState }) {
  const p = route.params;
  return (
    <section data-testid="view-replay" aria-labelledby="replay-title">
      <h1 id="replay-title">{p.plan ? `Replay plan ${p.plan}` : "Replay"}</h1>
      <p>
        <a href={hrefOf("replay")}>All plans</a> ·{" "}
        <a href={hrefOf("replay", { new: "true" })}>Build a plan</a>
      </p>
      {p.plan ? <PlanReview id={p.plan} /> : p.new === "true" ? <NewPlan /> : <PlanList />}
    </section>
  );
}

function PlanList() {
  const load = useLoad<PlanSummary[]>(
    "plans",
    async (api, signal) =>
      parsePlain<PlanSummary[]>(await api.get("/v1/replay-plans", {}, signal)).data,
  );
  return (
    <Loaded load={load} what="replay plans">
      {plans =>
        plans.length === 0 ? (
          <Empty>No replay plan is stored yet.</Empty>
        ) : (
          <div class="table-wrap">
            <table data-testid="plan-list">
              <caption class="visually-hidden">Stored replay plans, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Plan</th>
                  <th scope="col">Created</th>
                  <th scope="col">Source → target</th>
                  <th scope="col">Objects</th>
                </tr>
              </thead>
              <tbody>
                {plans.map(pl => (
                  <tr key={pl.id} data-testid="plan-row" data-plan={pl.id}>
                    <th scope="row">
                      <a href={hrefOf("replay", { plan: pl.id })}>{pl.id}</a>
                    </th>
                    <td>
                      <time>{pl.createdAt}</time>
                    </td>
                    <td>
                      {pl.sourceCluster} → {pl.targetCluster}
                    </td>
                    <td>{pl.objects}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )
      }
    </Loaded>
  );
}
