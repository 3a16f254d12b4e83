// Snapshots: the stored ones with their completeness; pick two to compare them object by object.
import { parseAnswer, type Answer } from "../api-client";
import { hrefOf, withParams, type RouteState } from "../route-state";
import {
  compareSnapshots,
  incompleteness,
  type SnapshotObject,
  type SnapshotSummary,
} from "../snapshot-model";
import { valueText } from "../timeline-model";
import { useLoad } from "../ui/context";
import { CoverageBanner } from "../ui/coverage-banner";
import { formValues, go } from "../ui/nav";
import { Empty, Loaded } from "../ui/states";

type Stored = Answer<{ snapshot: SnapshotSummary; objects: SnapshotObject[] }>;

export function SnapshotsView({ route }: { route: RouteState }) {
  const p = route.params;
  const list = useLoad<Answer<SnapshotSummary[]>>(
    JSON.stringify([p.cluster]),
    async (api, signal) =>
      parseAnswer(await api.get("/v1/snapshots", { cluster: p.cluster }, signal)),
  );
  return (
    <section data-testid="view-snapshots" aria-labelledby="snapshots-title">
      <h1 id="snapshots-title">Snapshots</h1>
      <Loaded load={list} what="snapshots">
        {a => (
          <>
            <CoverageBanner answer={a} />
            {a.data.length === 0 ? (
              <Empty>
                No snapshot is stored yet. Take one with <code>krply snapshot</code> or POST
                /v1/snapshots.
              </Empty>
            ) : (
              <SnapshotList snapshots={a.data} route={route} />
            )}
          </>
        )}
      </Loaded>
      {p.a && p.b && <Compare route={route} />}
    </section>
  );
}

function SnapshotList({ snapshots, route }: { snapshots: SnapshotSummary[]; route: RouteState }) {
  const p = route.params;
  return (
    <form
      key={JSON.stringify(p)}
      aria-label="Compare two snapshots"
      onSubmit={e => {
        e.preventDefault();
        const v = formValues(e.currentTarget);
        go(withParams(route, { a: v.a, b: v.b, ns: v.ns }));
      }}
    >
      <div class="table-wrap">
        <table data-testid="snapshot-list">
          <caption class="visually-hidden">Stored snapshots, oldest first</caption>
          <thead>
            <tr>
              <th scope="col">Snapshot</th>
              <th scope="col">At</th>
              <th scope="col">Objects</th>
              <th scope="col">Completeness</th>
              <th scope="col">From</th>
              <th scope="col">To</th>
            </tr>
          </thead>
          <tbody>
            {snapshots.map((s, i) => {
              const why = incompleteness(s);
              return (
                <tr
                  key={s.id}
                  data-testid="snapshot-row"
                  data-id={s.id}
                  data-complete={String(s.complete)}
                >
                  <th scope="row">
                    {s.name} <span class="muted">{s.id}</span>
                  </th>
                  <td>
                    <time>{s.at}</time>
                  </td>
                  <td>{s.objectCount}</td>
                  <td>
                    {why === null ? (
                      <span class="badge ok">complete</span>
                    ) : (
                      <>
                        <span class="badge bad">incomplete</span> {why}
                        {s.missing.length > 0 && (
                          <ul>
                            {s.missing.map(m => (
                              <li key={m}>
                                <code>{m}</code>
                              </li>
                            ))}
                          </ul>
                        )}
                      </>
                    )}
                  </td>
                  <td>
                    <input
                      type="radio"
                      name="a"
                      value={s.id}
                      aria-label={`Compare from ${s.name}`}
                      defaultChecked={p.a ? p.a === s.id : i === snapshots.length - 2}
                    />
                  </td>
                  <td>
                    <input
                      type="radio"
                      name="b"
                      value={s.id}
                      aria-label={`Compare to ${s.name}`}
                      defaultChecked={p.b ? p.b === s.id : i === snapshots.length - 1}
                    />
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      <div class="filters">
        <label>
          Namespace <input name="ns" defaultValue={p.ns ?? ""} placeholder="all" />
        </label>
        <button type="submit" disabled={snapshots.length < 2}>
          Compare
        </button>
      </div>
    </form>
  );
}

function Compare({ route }: { route: RouteState }) {
  const p = route.params;
  const load = useLoad<[Stored, Stored]>(JSON.stringify([p.a, p.b, p.ns]), async (api, signal) => {
    const get = (id: string) =>
      api.get(`/v1/snapshots/${encodeURIComponent(id)}`, { namespace: p.ns }, signal);
    const [a, b] = await Promise.all([get(p.a!), get(p.b!)]);
    return [parseAnswer(a), parseAnswer(b)];
  });
  return (
    <section aria-labelledby="compare-title" data-testid="snapshot-compare">
      <h2 id="compare-title">
        Compare {p.a} → {p.b}
      </h2>
      <Loaded load={load} what="both snapshots">
        {([a, b]) => {
          const deltas = compareSnapshots(a.data.objects, b.data.objects);
          return (
            <>
              <CoverageBanner answer={a} label={`Coverage of ${a.data.snapshot.name}`} />
              <CoverageBanner answer={b} label={`Coverage of ${b.data.snapshot.name}`} />
              {deltas.length === 0 ? (
                <Empty>The two snapshots hold the same objects with the same fields.</Empty>
              ) : (
                <div class="table-wrap">
                  <table data-testid="snapshot-deltas">
                    <thead>
                      <tr>
                        <th scope="col">Object</th>
                        <th scope="col">Change</th>
                        <th scope="col">Fields</th>
                      </tr>
                    </thead>
                    <tbody>
                      {deltas.map(d => (
                        <tr
                          key={`${d.group}/${d.kind}/${d.namespace}/${d.name}`}
                          data-testid="snapshot-delta"
                        >
                          <th scope="row">
                            <a
                              href={hrefOf("diff", {
                                kind: d.kind,
                                group: d.group || undefined,
                                ns: d.namespace || undefined,
                                name: d.name,
                                cluster: p.cluster,
                                a: a.data.snapshot.at,
                                b: b.data.snapshot.at,
                              })}
                            >
                              {d.kind} {d.namespace ? `${d.namespace}/` : ""}
                              {d.name}
                            </a>
                          </th>
                          <td>{d.change}</td>
                          <td>
                            {d.fields.length === 0 ? (
                              "—"
                            ) : (
                              <ul>
                                {d.fields.slice(0, 20).map(f => (
                                  <li key={f.path}>
                                    <code>{f.path}</code>: {valueText(f.before)} →{" "}
                                    {valueText(f.after)}
                                  </li>
                                ))}
                                {d.fields.length > 20 && <li>and {d.fields.length - 20} more</li>}
                              </ul>
                            )}
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
              )}
            </>
          );
        }}
      </Loaded>
    </section>
  );
}
