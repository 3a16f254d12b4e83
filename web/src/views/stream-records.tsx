// One stream's journal records, a cursor page at a time (GET /v1/events?stream=…&cursor=…). The cursor
// is in the URL, so a page can be linked and the browser's Back goes to the page before.
import { parseAnswer, type Answer } from "../api-client";
import { hrefOf, withParams, type RouteState } from "../route-state";
import { useLoad } from "../ui/context";
import { CoverageBanner } from "../ui/coverage-banner";
import { Empty, Loaded } from "../ui/states";

interface RecordRow {
  type: string;
  ingestSeq: number;
  observedAt: string;
  watchType?: string;
  resource?: {
    group: string;
    kind: string;
    namespace: string;
    name: string;
    resourceVersion: string;
  };
  gap?: { reason?: string };
}

const PAGE = 100;

export function StreamRecords({ route, stream }: { route: RouteState; stream: string }) {
  const cursor = route.params.cursor;
  const load = useLoad<Answer<{ records: RecordRow[]; nextCursor: string | null }>>(
    JSON.stringify([stream, cursor, route.params.cluster]),
    async (api, signal) =>
      parseAnswer(
        await api.get(
          "/v1/events",
          { cluster: route.params.cluster, stream, objects: "false", limit: String(PAGE), cursor },
          signal,
        ),
      ),
  );
  return (
    <section aria-labelledby="records-title" data-testid="stream-records">
      <h2 id="records-title">
        Records of <code>{stream}</code>
      </h2>
      <Loaded load={load} what="records">
        {a => (
          <>
            <CoverageBanner answer={a} label="Coverage of these records" />
            {a.data.records.length === 0 ? (
              <Empty>No records on this page.</Empty>
            ) : (
              <div class="table-wrap">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">#</th>
                      <th scope="col">Record</th>
                      <th scope="col">Observed at</th>
                      <th scope="col">Object</th>
                      <th scope="col">RV</th>
                    </tr>
                  </thead>
                  <tbody>
                    {a.data.records.map(r => (
                      <tr key={r.ingestSeq} data-testid="record-row" data-type={r.type}>
                        <td>{r.ingestSeq}</td>
                        <td>
                          {r.type}
                          {r.watchType ? ` ${r.watchType}` : ""}
                        </td>
                        <td>
                          <time>{r.observedAt}</time>
                        </td>
                        <td>
                          {r.resource ? (
                            <a
                              href={hrefOf("timeline", {
                                cluster: route.params.cluster,
                                kind: r.resource.kind,
                                group: r.resource.group || undefined,
                                ns: r.resource.namespace || undefined,
                                name: r.resource.name,
                              })}
                            >
                              {r.resource.kind}{" "}
                              {r.resource.namespace ? `${r.resource.namespace}/` : ""}
                              {r.resource.name}
                            </a>
                          ) : (
                            "—"
                          )}
                        </td>
                        <td>{r.resource?.resourceVersion ?? "—"}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
            <nav class="pager" aria-label="Record pages">
              {cursor && <a href={withParams(route, { cursor: null })}>First page</a>}
              {a.data.nextCursor ? (
                <a href={withParams(route, { cursor: a.data.nextCursor })}>Next page</a>
              ) : (
                <span class="muted">Last page</span>
              )}
            </nav>
          </>
        )}
      </Loaded>
    </section>
  );
}
