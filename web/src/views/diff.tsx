// Diff: one object between two points (rv:<RV> or a time), side by side and as a field list, with
// server metadata hidden unless asked for. Without an object it compares the whole journal between
// two times (GET /v1/diff): objects added, removed and changed.
import { parseAnswer, type Answer } from "../api-client";
import { fieldRows, prettyText, sideBySide, withoutServerMetadata } from "../diff-model";
import {
  hrefOf,
  pointLabel,
  refOf,
  refParams,
  refQuery,
  withParams,
  type RouteState,
} from "../route-state";
import { valueText } from "../timeline-model";
import { useLoad } from "../ui/context";
import { CoverageBanner } from "../ui/coverage-banner";
import { formValues, go } from "../ui/nav";
import { Empty, Loaded } from "../ui/states";
import { JournalDiff } from "./journal-diff";

interface ObjectAt {
  exists: boolean;
  object: null | {
    kind: string;
    namespace: string;
    name: string;
    object: unknown;
    provenance: { resourceVersion: string; observedAt: string; streamId: string };
  };
}

export function DiffView({ route }: { route: RouteState }) {
  const p = route.params;
  const ref = refOf(p);
  const ready = Boolean(p.a && p.b);
  const load = useLoad<[Answer<ObjectAt>, Answer<ObjectAt>]>(
    ref && ready ? JSON.stringify([ref, p.a, p.b]) : null,
    async (api, signal) => {
      const path = `/v1/objects/${encodeURIComponent(ref!.kind)}/${encodeURIComponent(ref!.name)}`;
      const [a, b] = await Promise.all([
        api.get(path, { ...refQuery(ref!), at: p.a }, signal),
        api.get(path, { ...refQuery(ref!), at: p.b }, signal),
      ]);
      return [parseAnswer<ObjectAt>(a), parseAnswer<ObjectAt>(b)];
    },
  );
  return (
    <section data-testid="view-diff" aria-labelledby="diff-title">
      <h1 id="diff-title">
        Diff{ref ? ` of ${ref.kind} ${ref.namespace ? `${ref.namespace}/` : ""}${ref.name}` : ""}
      </h1>
      <form
        key={JSON.stringify(route.params)}
        class="filters"
        aria-label="What to compare"
        onSubmit={e => {
          e.preventDefault();
          const v = formValues(e.currentTarget);
          go(hrefOf("diff", { ...v, meta: p.meta }));
        }}
      >
        <label>
          Kind <input name="kind" defaultValue={p.kind ?? ""} placeholder="empty: whole journal" />
        </label>
        <label>
          Namespace <input name="ns" defaultValue={p.ns ?? ""} />
        </label>
        <label>
          Name <input name="name" defaultValue={p.name ?? ""} />
        </label>
        <label>
          From (rv:RV or ISO time) <input name="a" required defaultValue={p.a ?? ""} />
        </label>
        <label>
          To (rv:RV or ISO time) <input name="b" required defaultValue={p.b ?? ""} />
        </label>
        <label>
          Cluster <input name="cluster" defaultValue={p.cluster ?? ""} placeholder="only one" />
        </label>
        <button type="submit">Compare</button>
      </form>
      {!ready && <p class="muted">Give two points: a resourceVersion as rv:RV, or an ISO time.</p>}
      {ready && !ref && <JournalDiff route={route} />}
      <Loaded load={load} what="both versions">
        {([a, b]) => <ObjectDiff a={a} b={b} route={route} />}
      </Loaded>
    </section>
  );
}

function ObjectDiff({
  a,
  b,
  route,
}: {
  a: Answer<ObjectAt>;
  b: Answer<ObjectAt>;
  route: RouteState;
}) {
  const showMeta = route.params.meta === "true";
  const shape = (x: Answer<ObjectAt>) => {
    const o = x.data.exists ? (x.data.object?.object ?? null) : null;
    return showMeta ? o : withoutServerMetadata(o);
  };
  const left = shape(a);
  const right = shape(b);
  const fields = fieldRows(left ?? {}, right ?? {});
  const lines = sideBySide(prettyText(left), prettyText(right));
  const ref = refOf(route.params)!;
  const side = (x: Answer<ObjectAt>, point: string) => (
    <>
      {pointLabel(point)}:{" "}
      {x.data.exists && x.data.object ? (
        <>
          RV <code>{x.data.object.provenance.resourceVersion}</code>, observed{" "}
          <time>{x.data.object.provenance.observedAt}</time>
        </>
      ) : (
        <strong>did not exist</strong>
      )}
    </>
  );
  return (
    <>
      <CoverageBanner answer={a} label="Coverage of the first version" />
      <CoverageBanner answer={b} label="Coverage of the second version" />
      <p>
        <label class="inline">
          <input
            type="checkbox"
            checked={showMeta}
            onChange={e =>
              go(
                withParams(route, { meta: (e.target as HTMLInputElement).checked ? "true" : null }),
              )
            }
          />{" "}
          Show server metadata
        </label>{" "}
        <span class="muted">
          (managedFields, resourceVersion, uid, creationTimestamp, generation)
        </span>
        {" · "}
        <a href={hrefOf("timeline", refParams(ref))}>Timeline</a>
      </p>
      <h2 id="fields-title">Fields changed</h2>
      {fields.length === 0 ? (
        <Empty>No field differs{showMeta ? "" : " (server metadata hidden)"}.</Empty>
      ) : (
        <div class="table-wrap">
          <table data-testid="diff-fields" aria-labelledby="fields-title">
            <thead>
              <tr>
                <th scope="col">Field</th>
                <th scope="col">Change</th>
                <th scope="col">Before</th>
                <th scope="col">After</th>
              </tr>
            </thead>
            <tbody>
              {fields.map(f => (
                <tr key={f.path} data-testid="diff-field" data-path={f.path}>
                  <th scope="row">
                    <code>{f.path}</code>
                  </th>
                  <td>{f.change}</td>
                  <td class="val">{f.change === "added" ? "—" : valueText(f.before)}</td>
                  <td class="val">{f.change === "removed" ? "—" : valueText(f.after)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <h2>Side by side</h2>
      <div class="diff-grid" data-testid="diff-side-by-side">
        <div>
          <h3>{side(a, route.params.a ?? "")}</h3>
          <ol class="diff-lines" aria-label="First version">
            {lines.map((l, i) => (
              <li
                key={i}
                class={
                  l.left === null ? "blank" : l.kind === "change" || l.kind === "del" ? "del" : ""
                }
              >
                {l.left === null ? "" : l.kind === "same" ? `  ${l.left}` : `- ${l.left}`}
              </li>
            ))}
          </ol>
        </div>
        <div>
          <h3>{side(b, route.params.b ?? "")}</h3>
          <ol class="diff-lines" aria-label="Second version">
            {lines.map((l, i) => (
              <li
                key={i}
                class={
                  l.right === null ? "blank" : l.kind === "change" || l.kind === "add" ? "add" : ""
                }
              >
                {l.right === null ? "" : l.kind === "same" ? `  ${l.right}` : `+ ${l.right}`}
              </li>
            ))}
          </ol>
        </div>
      </div>
    </>
  );
}
