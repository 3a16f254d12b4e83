// The whole journal between two times (GET /v1/diff): each object added, removed or changed, with its
// attributed field changes and a link to the object's own diff.
import { parseAnswer, type Answer } from "../api-client";
import { hrefOf, type RouteState } from "../route-state";
import { fieldManagers, valueText, type FieldChange } from "../timeline-model";
import { useLoad } from "../ui/context";
import { CoverageBanner } from "../ui/coverage-banner";
import { Empty, Loaded } from "../ui/states";

interface Changed {
  kind: string;
  group: string;
  namespace: string;
  name: string;
  change: "added" | "removed" | "changed";
  changes: FieldChange[];
}

export function JournalDiff({ route }: { route: RouteState }) {
  const p = route.params;
  const load = useLoad<Answer<{ objects: Changed[]; before: string; after: string }>>(
    JSON.stringify([p.cluster, p.ns, p.a, p.b]),
    async (api, signal) =>
      parseAnswer(
        await api.get(
          "/v1/diff",
          { cluster: p.cluster, namespace: p.ns, before: p.a, after: p.b },
          signal,
        ),
      ),
  );
  return (
    <Loaded load={load} what="the diff">
      {a => (
        <>
          <CoverageBanner answer={a} />
          {a.data.objects.length === 0 ? (
            <Empty>
              Nothing changed between <time>{a.data.before}</time> and <time>{a.data.after}</time>.
            </Empty>
          ) : (
            <div class="table-wrap">
              <table data-testid="journal-diff">
                <caption>
                  Objects that differ between <time>{a.data.before}</time> and{" "}
                  <time>{a.data.after}</time>
                </caption>
                <thead>
                  <tr>
                    <th scope="col">Object</th>
                    <th scope="col">Change</th>
                    <th scope="col">Fields</th>
                  </tr>
                </thead>
                <tbody>
                  {a.data.objects.map(o => {
                    const ref = {
                      cluster: p.cluster,
                      kind: o.kind,
                      group: o.group || undefined,
                      ns: o.namespace || undefined,
                      name: o.name,
                    };
                    return (
                      <tr
                        key={`${o.group}/${o.kind}/${o.namespace}/${o.name}`}
                        data-testid="journal-diff-row"
                      >
                        <th scope="row">
                          <a href={hrefOf("diff", { ...ref, a: p.a, b: p.b })}>
                            {o.kind} {o.namespace ? `${o.namespace}/` : ""}
                            {o.name}
                          </a>
                        </th>
                        <td>{o.change}</td>
                        <td>
                          {o.changes.length === 0 ? (
                            "—"
                          ) : (
                            <ul>
                              {o.changes.map(c => (
                                <li key={c.path}>
                                  <code>{c.path}</code>: {valueText(c.before)} →{" "}
                                  {valueText(c.after)}
                                  {fieldManagers(c) && (
                                    <span class="muted"> — {fieldManagers(c)}</span>
                                  )}
                                </li>
                              ))}
                            </ul>
                          )}
                        </td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </div>
          )}
        </>
      )}
    </Loaded>
  );
}
