// Stream health: per stream its state, lag, last event, events per second over a window, relists and
// down windows; with `stream` set, that stream's records a cursor page at a time.
import { parseAnswer, type Answer } from "../api-client";
import type { StreamReport } from "../coverage-model";
import { resourceLabel } from "../coverage-model";
import {
  countByStream,
  formatSeconds,
  healthRows,
  windowSeconds,
  windowStart,
  type RateWindow,
} from "../health-model";
import { hrefOf, withParams, type RouteState } from "../route-state";
import { useLoad } from "../ui/context";
import { CoverageBanner } from "../ui/coverage-banner";
import { formValues, go } from "../ui/nav";
import { Empty, Loaded } from "../ui/states";
import { StreamRecords } from "./stream-records";

/** Pages of GET /v1/events read to count a window; beyond this the rate is shown as "at least". */
const MAX_RATE_PAGES = 10;

interface HealthData {
  streams: Answer<StreamReport[]>;
  rates: RateWindow;
  endAt: string;
}

export function StreamsView({ route }: { route: RouteState }) {
  const p = route.params;
  const seconds = windowSeconds(p.window);
  const key = JSON.stringify([p.cluster, seconds, p.until]);
  const load = useLoad<HealthData>(key, async (api, signal) => {
    const streams = parseAnswer<StreamReport[]>(
      await api.get("/v1/streams", { cluster: p.cluster }, signal),
    );
    const endMs = p.until ? Date.parse(p.until) : Date.now();
    const since = windowStart(endMs, seconds);
    const until = new Date(endMs).toISOString();
    const counts = new Map<string, number>();
    let cursor: string | undefined;
    let pages = 0;
    let truncated = false;
    for (;;) {
      const page = parseAnswer<{ records: { streamId: string }[]; nextCursor: string | null }>(
        await api.get(
          "/v1/events",
          {
            cluster: p.cluster,
            since,
            until,
            types: "event",
            objects: "false",
            limit: "1000",
            cursor,
          },
          signal,
        ),
      );
      countByStream(page.data.records, counts);
      pages++;
      if (!page.data.nextCursor) break;
      if (pages >= MAX_RATE_PAGES) {
        truncated = true;
        break;
      }
      cursor = page.data.nextCursor;
    }
    return { streams, rates: { counts, seconds, truncated }, endAt: until };
  });
  return (
    <section data-testid="view-streams" aria-labelledby="streams-title">
      <h1 id="streams-title">Stream health</h1>
      <form
        key={JSON.stringify(route.params)}
        class="filters"
        aria-label="Stream health filters"
        onSubmit={e => {
          e.preventDefault();
          const v = formValues(e.currentTarget);
          go(withParams(route, { cluster: v.cluster, window: v.window, until: v.until }));
        }}
      >
        <label>
          Cluster <input name="cluster" defaultValue={p.cluster ?? ""} placeholder="only one" />
        </label>
        <label>
          Rate window (seconds){" "}
          <input name="window" defaultValue={String(seconds)} inputMode="numeric" />
        </label>
        <label>
          Window ends (ISO time){" "}
          <input name="until" defaultValue={p.until ?? ""} placeholder="now" />
        </label>
        <button type="submit">Show</button>
      </form>
      <Loaded load={load} what="stream health">
        {d => <HealthTable data={d} route={route} />}
      </Loaded>
      {p.stream && <StreamRecords route={route} stream={p.stream} />}
    </section>
  );
}

function HealthTable({ data, route }: { data: HealthData; route: RouteState }) {
  const rows = healthRows(data.streams.data, data.rates);
  const byId = new Map(data.streams.data.map(s => [s.streamId, s]));
  return (
    <>
      <CoverageBanner answer={data.streams} label="Coverage of the streams" />
      {rows.length === 0 ? (
        <Empty>The journal has no streams yet.</Empty>
      ) : (
        <div class="table-wrap">
          <table data-testid="health-table">
            <caption>
              Events per second over the {formatSeconds(data.rates.seconds)} to{" "}
              <time>{data.endAt}</time>
              {data.rates.truncated
                ? " (counting stopped at the page limit: rates are lower bounds)"
                : ""}
              . Relists count the reconnects that lost history (each gap ends in one); reconnects
              that lost nothing are in the recorder's krply_reconnects_total metric.
            </caption>
            <thead>
              <tr>
                <th scope="col">Stream</th>
                <th scope="col">State</th>
                <th scope="col">Lag</th>
                <th scope="col">Last event (observed)</th>
                <th scope="col">Last RV</th>
                <th scope="col">Events/s</th>
                <th scope="col">Relists (gaps)</th>
                <th scope="col">Down windows</th>
              </tr>
            </thead>
            <tbody>
              {rows.map(r => {
                const s = byId.get(r.streamId);
                const selected = route.params.stream === r.streamId;
                return (
                  <tr key={r.streamId} data-testid="health-row" data-stream={r.streamId}>
                    <th scope="row">
                      <a
                        href={withParams(route, { stream: r.streamId, cursor: null })}
                        aria-current={selected ? "true" : undefined}
                        title={r.streamId}
                      >
                        {s ? resourceLabel(s.key) : r.streamId}
                      </a>
                      <span class="muted"> {s?.key.namespace || "(all)"}</span>
                    </th>
                    <td>
                      <span class={`badge state-${r.state}`}>{r.state}</span>
                    </td>
                    <td>{formatSeconds(r.lagSeconds)}</td>
                    <td>{r.lastObservedAt ? <time>{r.lastObservedAt}</time> : "none recorded"}</td>
                    <td>{r.lastResourceVersion ?? "—"}</td>
                    <td>
                      {r.atLeast ? "≥ " : ""}
                      {r.eventsPerSecond}
                    </td>
                    <td>
                      {r.relists}
                      {r.openGaps > 0 ? ` (${r.openGaps} open)` : ""}
                    </td>
                    <td>{r.downWindows}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      <p>
        <a href={hrefOf("coverage")}>Back to coverage</a>
      </p>
    </>
  );
}
