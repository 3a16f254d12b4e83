// Coverage: every stream against its state (baseline, gaps, down windows, unavailable, degraded,
// complete at the chosen time), with a time strip per stream that marks its gaps and down windows.
import type { Answer } from "../api-client";
import { parseAnswer } from "../api-client";
import {
  coverageRows,
  coverageSummary,
  stripTimes,
  type StreamCoverage,
  type StreamReport,
} from "../coverage-model";
import { hrefOf, withParams, type RouteState } from "../route-state";
import { placeMarkers, prunedMarker, stripRange } from "../time-strip";
import { useLoad } from "../ui/context";
import { CoverageBanner } from "../ui/coverage-banner";
import { formValues, go } from "../ui/nav";
import { Empty, Loaded } from "../ui/states";
import { TimeStrip } from "../ui/time-strip";

interface CoverageData {
  streams: Answer<StreamReport[]>;
  at: Answer<{ clusterId: string; at: string; streams: StreamCoverage[] }>;
  firstRecordAt: string | null;
}

export function CoverageView({ route }: { route: RouteState }) {
  const p = route.params;
  const key = JSON.stringify([p.cluster, p.ns, p.at]);
  const load = useLoad<CoverageData>(key, async (api, signal) => {
    const [streams, at, first] = await Promise.all([
      api.get("/v1/streams", { cluster: p.cluster }, signal),
      api.get("/v1/coverage", { cluster: p.cluster, namespace: p.ns, at: p.at }, signal),
      api.get("/v1/events", { cluster: p.cluster, limit: "1", objects: "false" }, signal),
    ]);
    const firstPage = parseAnswer<{ records: { observedAt: string }[] }>(first);
    return {
      streams: parseAnswer<StreamReport[]>(streams),
      at: parseAnswer(at),
      firstRecordAt: firstPage.data.records[0]?.observedAt ?? null,
    };
  });
  return (
    <section data-testid="view-coverage" aria-labelledby="coverage-title">
      <h1 id="coverage-title">Coverage</h1>
      <form
        key={JSON.stringify(route.params)}
        class="filters"
        aria-label="Coverage filters"
        onSubmit={e => {
          e.preventDefault();
          const v = formValues(e.currentTarget);
          go(withParams(route, { cluster: v.cluster, ns: v.ns, at: v.at }));
        }}
      >
        <label>
          Cluster <input name="cluster" defaultValue={p.cluster ?? ""} placeholder="only one" />
        </label>
        <label>
          Namespace <input name="ns" defaultValue={p.ns ?? ""} placeholder="all" />
        </label>
        <label>
          At (ISO time) <input name="at" defaultValue={p.at ?? ""} placeholder="now" />
        </label>
        <button type="submit">Show</button>
      </form>
      <Loaded load={load} what="coverage">
        {d => <Matrix data={d} nsFilter={p.ns} />}
      </Loaded>
    </section>
  );
}

function Matrix({ data, nsFilter }: { data: CoverageData; nsFilter?: string }) {
  const streams = nsFilter
    ? data.streams.data.filter(s => !s.key.namespace || s.key.namespace === nsFilter)
    : data.streams.data;
  const rows = coverageRows(streams, data.at.data.streams);
  const atMs = Date.parse(data.at.data.at);
  const range = stripRange(stripTimes(rows, [data.firstRecordAt]), atMs);
  const sum = coverageSummary(rows);
  const pruned = data.streams.coverage.prunedBefore;
  return (
    <>
      <CoverageBanner answer={data.at} />
      {rows.length === 0 ? (
        <Empty>The journal has no streams{nsFilter ? ` for namespace ${nsFilter}` : ""} yet.</Empty>
      ) : (
        <>
          <p class="summary" data-testid="coverage-summary">
            {sum.streams} streams at <time>{data.at.data.at}</time>: {sum.incomplete} incomplete,{" "}
            {sum.withGaps} with gaps, {sum.withDown} with recorder down windows, {sum.unavailable}{" "}
            unavailable. Strips run from <time>{new Date(range.fromMs).toISOString()}</time> to{" "}
            <time>{data.at.data.at}</time>.
          </p>
          <Legend />
          <div class="table-wrap">
            <table data-testid="coverage-matrix">
              <caption class="visually-hidden">Streams and their coverage</caption>
              <thead>
                <tr>
                  <th scope="col">Stream</th>
                  <th scope="col">State</th>
                  <th scope="col">Baseline</th>
                  <th scope="col">Gaps (open)</th>
                  <th scope="col">Down windows</th>
                  <th scope="col">Complete at time</th>
                  <th scope="col" class="strip-col">
                    Time strip
                  </th>
                </tr>
              </thead>
              <tbody>
                {rows.map(r => {
                  // Gaps are drawn last (and above, in CSS): a gap inside a down window must show.
                  const markers = [
                    ...prunedMarker(pruned, range),
                    ...placeMarkers("down", r.down, range),
                    ...placeMarkers("gap", r.gaps, range),
                  ];
                  return (
                    <tr key={r.streamId} data-testid="stream-row" data-stream={r.streamId}>
                      <th scope="row">
                        <a href={hrefOf("streams", { stream: r.streamId })} title={r.streamId}>
                          {r.resource}
                        </a>
                        <span class="muted"> {r.namespace}</span>
                      </th>
                      <td>
                        <span class={`badge state-${r.state}`}>{r.state}</span>
                      </td>
                      <td>{r.baseline ? "yes" : <span class="badge bad">missing</span>}</td>
                      <td>
                        {r.gaps.length} ({r.openGaps})
                      </td>
                      <td>{r.down.length}</td>
                      <td>
                        {r.completeAt === null ? (
                          "unknown"
                        ) : r.completeAt ? (
                          <span class="badge ok">complete</span>
                        ) : (
                          <span class="badge bad" title={r.reasons.join("\n")}>
                            incomplete
                          </span>
                        )}
                      </td>
                      <td class="strip-col">
                        <TimeStrip
                          markers={markers}
                          range={range}
                          stream={r.streamId}
                          label={`Time strip of ${r.resource} ${r.namespace}`}
                        />
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        </>
      )}
    </>
  );
}

export function Legend() {
  return (
    <p class="legend" aria-label="Legend">
      <span class="marker-swatch gap" aria-hidden="true" /> gap (changes unknown){" "}
      <span class="marker-swatch down" aria-hidden="true" /> recorder down (changes observed late){" "}
      <span class="marker-swatch pruned" aria-hidden="true" /> pruned by retention
    </p>
  );
}
