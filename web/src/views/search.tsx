// Search: when and where an object existed. Each range says how it began and ended (created, first
// seen in a list, deleted, vanished in a gap) and whether a gap makes it uncertain. The server pages
// the hits and the URL holds the page's cursor, so a page is deep-linkable.
import { parseAnswer, type Answer } from "../api-client";
import { hrefOf, withParams, type RouteState } from "../route-state";
import { useLoad } from "../ui/context";
import { CoverageBanner } from "../ui/coverage-banner";
import { formValues, go } from "../ui/nav";
import { Empty, Loaded } from "../ui/states";

interface Existence {
  from: string;
  to: string | null;
  uid: string | null;
  start: string;
  end: string | null;
  uncertain: boolean;
}
interface Found {
  clusterId: string;
  kind: string;
  group: string;
  namespace: string;
  name: string;
  ranges: Existence[];
}
interface FoundPage {
  hits: Found[];
  nextCursor: string | null;
}

export function SearchView({ route }: { route: RouteState }) {
  const p = route.params;
  const asked = p.name !== undefined || p.kind !== undefined || p.labels !== undefined;
  const cursor = p.cursor || undefined;
  const limit = p.limit || undefined;
  const load = useLoad<Answer<FoundPage>>(
    asked ? JSON.stringify([p.cluster, p.kind, p.name, p.labels, cursor, limit]) : null,
    async (api, signal) =>
      parseAnswer(
        await api.get(
          "/v1/search",
          {
            cluster: p.cluster,
            kind: p.kind,
            name: !p.name || p.name === "*" ? "" : p.name,
            labels: p.labels,
            cursor,
            limit,
          },
          signal,
        ),
      ),
  );
  return (
    <section data-testid="view-search" aria-labelledby="search-title">
      <h1 id="search-title">Search</h1>
      <form
        key={JSON.stringify(route.params)}
        class="filters"
        role="search"
        aria-label="Find objects"
        onSubmit={e => {
          e.preventDefault();
          const v = formValues(e.currentTarget);
          // An empty name prefix is a real question (every name), so it is kept as "*".
          go(
            hrefOf("search", {
              cluster: v.cluster,
              kind: v.kind,
              labels: v.labels,
              name: v.name || "*",
            }),
          );
        }}
      >
        <label>
          Name prefix <input name="name" defaultValue={p.name === "*" ? "" : (p.name ?? "")} />
        </label>
        <label>
          Kind <input name="kind" defaultValue={p.kind ?? ""} placeholder="any" />
        </label>
        <label>
          Labels <input name="labels" defaultValue={p.labels ?? ""} placeholder="app=web" />
        </label>
        <label>
          Cluster <input name="cluster" defaultValue={p.cluster ?? ""} placeholder="only one" />
        </label>
        <button type="submit">Search</button>
      </form>
      {!asked && <p class="muted">Give a name prefix, a kind or labels to search the journal.</p>}
      <Loaded load={load} what="search results">
        {a => (
          <>
            <CoverageBanner answer={a} />
            {a.data.hits.length === 0 && a.data.nextCursor === null ? (
              <Empty>
                {cursor ? "No more objects match." : "No object in the journal matches."}
              </Empty>
            ) : (
              <>
                {a.data.hits.length > 0 && <Results found={a.data.hits} route={route} />}
                <Pager route={route} page={a.data} first={cursor === undefined} />
              </>
            )}
          </>
        )}
      </Loaded>
    </section>
  );
}

/** Pages go forward by cursor; a page may hold fewer hits than the server's limit and still go on. */
function Pager({ route, page, first }: { route: RouteState; page: FoundPage; first: boolean }) {
  if (first && page.nextCursor === null) return null;
  return (
    <nav class="pager" aria-label="Search result pages">
      {first ? (
        <span class="muted">First page</span>
      ) : (
        <a href={withParams(route, { cursor: null })}>First page</a>
      )}
      {page.nextCursor !== null ? (
        <a href={withParams(route, { cursor: page.nextCursor })}>Next page</a>
      ) : (
        <span class="muted">Last page</span>
      )}
    </nav>
  );
}

function Results({ found, route }: { found: Found[]; route: RouteState }) {
  return (
    <div class="table-wrap">
      <table data-testid="search-results">
        <thead>
          <tr>
            <th scope="col">Object</th>
            <th scope="col">Existed (observed)</th>
            <th scope="col">Links</th>
          </tr>
        </thead>
        <tbody>
          {found.map(f => {
            const ref = {
              cluster: route.params.cluster,
              kind: f.kind,
              group: f.group || undefined,
              ns: f.namespace || undefined,
              name: f.name,
            };
            return (
              <tr
                key={`${f.clusterId}/${f.group}/${f.kind}/${f.namespace}/${f.name}`}
                data-testid="search-row"
              >
                <th scope="row">
                  {f.kind} {f.namespace ? `${f.namespace}/` : ""}
                  {f.name}
                  <span class="muted"> {f.clusterId}</span>
                </th>
                <td>
                  <ul>
                    {f.ranges.map(r => (
                      <li key={r.from}>
                        from <time>{r.from}</time> ({r.start}) to{" "}
                        {r.to ? (
                          <>
                            <time>{r.to}</time> ({r.end})
                          </>
                        ) : (
                          "now"
                        )}
                        {r.uncertain && (
                          <span class="badge warn" title="a gap overlaps this range">
                            uncertain: a gap overlaps it
                          </span>
                        )}
                      </li>
                    ))}
                  </ul>
                </td>
                <td>
                  <a href={hrefOf("timeline", ref)}>Timeline</a>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
