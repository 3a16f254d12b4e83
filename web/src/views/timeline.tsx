// Object timeline: every recorded change with its RV and observed time, the fields it changed and
// the field manager or audit user behind it; gaps, down windows and pruned history in place. The
// server pages it (oldest first) and the URL holds the page's cursor, so a page is deep-linkable
// and a history of 10,000 versions loads one page at a time.
import { parseAnswer, type Answer } from "../api-client";
import { hrefOf, refOf, refParams, refQuery, withParams, type RouteState } from "../route-state";
import {
  actorText,
  fieldManagers,
  timelineItems,
  valueText,
  TIMELINE_PAGE,
  type HistoryPage,
  type TimelineItem,
} from "../timeline-model";
import { useLoad } from "../ui/context";
import { CoverageBanner } from "../ui/coverage-banner";
import { go } from "../ui/nav";
import { ObjectForm } from "../ui/object-form";
import { Empty, Loaded } from "../ui/states";
import type { ObjectRef } from "../route-state";

export function TimelineView({ route }: { route: RouteState }) {
  const p = route.params;
  const ref = refOf(p);
  const status = p.status === "true";
  const cursor = p.cursor || undefined;
  // A link may ask for another page size; the server bounds it and says so if it is out of range.
  const limit = p.limit || String(TIMELINE_PAGE);
  const load = useLoad<Answer<HistoryPage>>(
    ref ? JSON.stringify([ref, status, cursor, limit]) : null,
    async (api, signal) =>
      parseAnswer(
        await api.get(
          `/v1/objects/${encodeURIComponent(ref!.kind)}/${encodeURIComponent(ref!.name)}/history`,
          {
            ...refQuery(ref!),
            status: status ? "true" : undefined,
            limit,
            cursor,
          },
          signal,
        ),
      ),
  );
  return (
    <section data-testid="view-timeline" aria-labelledby="timeline-title">
      <h1 id="timeline-title">
        Timeline
        {ref ? ` of ${ref.kind} ${ref.namespace ? `${ref.namespace}/` : ""}${ref.name}` : ""}
      </h1>
      <ObjectForm
        key={JSON.stringify(p)}
        params={p}
        label="Object"
        onPick={v => go(hrefOf("timeline", { ...v, status: p.status }))}
      />
      {ref && (
        <p>
          <label class="inline">
            <input
              type="checkbox"
              checked={status}
              onChange={e =>
                go(
                  withParams(route, {
                    status: (e.target as HTMLInputElement).checked ? "true" : null,
                    cursor: null,
                  }),
                )
              }
            />{" "}
            Include status changes
          </label>
        </p>
      )}
      {!ref && <p class="muted">Name an object, or pick one from Search.</p>}
      <p class="muted">
        Times are when krply <strong>observed</strong> each change, not when it was made.
      </p>
      <Loaded load={load} what="the timeline">
        {a => <Entries answer={a} route={route} objectRef={ref!} limit={limit} />}
      </Loaded>
    </section>
  );
}

function Entries({
  answer,
  route,
  objectRef,
  limit,
}: {
  answer: Answer<HistoryPage>;
  route: RouteState;
  objectRef: ObjectRef;
  limit: string;
}) {
  const pg = answer.data;
  const items = timelineItems(pg.entries, answer.coverage);
  const versions = pg.entries.filter(e => e.kind === "version").length;
  const link = (c: string | null) => withParams(route, { cursor: c });
  const paged = pg.previousCursor !== null || pg.nextCursor !== null;
  const pager = (where: string) =>
    paged && (
      <nav class="pager" aria-label={`Timeline pages (${where})`}>
        {pg.previousCursor !== null ? (
          <>
            <a href={link(null)}>First page</a>
            <a href={link(pg.previousCursor)}>Previous page</a>
          </>
        ) : (
          <span class="muted">Previous page</span>
        )}
        <span>
          Versions {pg.start + 1}–{pg.start + versions} of {pg.total}
        </span>
        {pg.nextCursor !== null ? (
          <a href={link(pg.nextCursor)}>Next page</a>
        ) : (
          <span class="muted">Next page</span>
        )}
      </nav>
    );
  return (
    <>
      <CoverageBanner answer={answer} />
      {pg.total === 0 ? (
        <Empty>The journal has no record of this object.</Empty>
      ) : (
        <>
          <p data-testid="timeline-total">
            {pg.total} version{pg.total === 1 ? "" : "s"}
            {paged ? `, ${limit} a page` : ""}
          </p>
          {pager("top")}
          <ol class="timeline" data-testid="timeline">
            {items.map((it, i) => (
              <Item key={`${pg.start}-${i}`} item={it} objectRef={objectRef} />
            ))}
          </ol>
          {pager("bottom")}
        </>
      )}
    </>
  );
}

function Item({ item, objectRef }: { item: TimelineItem; objectRef: ObjectRef }) {
  if (item.kind === "pruned")
    return (
      <li class="entry pruned" data-testid="timeline-entry" data-kind="pruned">
        <span data-testid="pruned-marker" data-stream="" data-from="" data-to={item.before}>
          <strong>Pruned</strong>: history before <time>{item.before}</time> was removed by
          retention; earlier versions are not shown because they are no longer known.
        </span>
      </li>
    );
  if (item.kind === "gap")
    return (
      <li class="entry gap" data-testid="timeline-entry" data-kind="gap">
        <span
          data-testid="gap-marker"
          data-stream={item.entry.streamId}
          data-from={item.from}
          data-to={item.to ?? ""}
        >
          <strong>Gap</strong>: changes between <time>{item.from}</time> and{" "}
          {item.to ? <time>{item.to}</time> : "now (still open)"} are unknown ({item.reason}).
          Versions may have come and gone unseen.
        </span>
      </li>
    );
  if (item.kind === "down")
    return (
      <li class="entry down" data-testid="timeline-entry" data-kind="down">
        <span
          data-testid="down-marker"
          data-stream={item.streamId}
          data-from={item.from}
          data-to={item.to}
        >
          <strong>Recorder down</strong> from <time>{item.from}</time> to <time>{item.to}</time>:
          changes in this window were observed late, at the resume; their observed times are not
          their times of change.
        </span>
      </li>
    );
  const e = item.entry;
  const rv = e.resourceVersion ?? "";
  const diffHref = item.previousRv
    ? hrefOf("diff", { ...refParams(objectRef), a: `rv:${item.previousRv}`, b: `rv:${rv}` })
    : null;
  return (
    <li class="entry" data-testid="timeline-entry" data-kind="version" data-rv={rv}>
      <div class="entry-head">
        <strong>{e.watchType ?? e.recordType}</strong>
        <span>
          RV <code>{rv || "—"}</code>
        </span>
        <span>
          observed <time>{e.observedAt}</time>
        </span>
        {e.synthetic && <span class="badge">from a list</span>}
        <span>by {actorText(e.actor, e.manager)}</span>
      </div>
      {e.note && <p class="muted">{e.note}</p>}
      {e.changes.length > 0 && (
        <ul aria-label="Fields changed">
          {e.changes.map(c => (
            <li key={c.path}>
              <code>{c.path}</code>: {c.added ? "added " : c.removed ? "removed " : ""}
              <span class="val">{valueText(c.before)}</span> →{" "}
              <span class="val">{valueText(c.after)}</span>
              {fieldManagers(c) && <span class="muted"> — {fieldManagers(c)}</span>}
            </li>
          ))}
        </ul>
      )}
      {diffHref && (
        <p>
          <a href={diffHref}>Diff with previous</a>
        </p>
      )}
    </li>
  );
}
