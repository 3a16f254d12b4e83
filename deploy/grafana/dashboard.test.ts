import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Registry } from "prom-client";
import { parser } from "@prometheus-io/lezer-promql";
import type { SyntaxNode } from "@lezer/common";
import { apiMetrics } from "../../src/api";
import { AuditMetrics } from "../../src/audit";
import { RecorderMetrics } from "../../src/metrics/recorder-metrics";

// Every query in deploy/grafana/krply.json must parse as PromQL and name only series krply serves.
// The served names come from the registries the processes build (the recorder's, with the audit
// metrics on it as src/runtime.ts registers them, and the sidecar's), never from a list kept here.

type Json = Record<string, unknown>;

const dashboard = JSON.parse(readFileSync(join(__dirname, "krply.json"), "utf8")) as {
  panels: Json[];
  templating: { list: Json[] };
};

/** Labels every scraped series carries from the ServiceMonitor's target, beside its own. */
const TARGET_LABELS = ["namespace", "pod", "service", "endpoint", "job", "instance", "container"];

/** Series name to label names, for every series the two real registries expose. */
function served(): Map<string, Set<string>> {
  const recorder = new RecorderMetrics();
  new AuditMetrics(recorder.registry);
  const registries: Registry[] = [recorder.registry, apiMetrics().registry];
  const out = new Map<string, Set<string>>();
  for (const registry of registries) {
    for (const metric of registry.getMetricsAsArray()) {
      const own = (metric as unknown as { labelNames?: readonly string[] }).labelNames ?? [];
      const labels = new Set([...own, ...TARGET_LABELS]);
      const type = String(metric.type);
      const names =
        type === "histogram"
          ? ["_bucket", "_sum", "_count"].map(s => metric.name + s)
          : type === "summary"
            ? [metric.name, `${metric.name}_sum`, `${metric.name}_count`]
            : [metric.name];
      for (const name of names) {
        out.set(name, name.endsWith("_bucket") ? new Set([...labels, "le"]) : labels);
      }
    }
  }
  return out;
}

/** Panels, rows' nested panels included. */
function allPanels(panels: Json[]): Json[] {
  return panels.flatMap(p => [p, ...allPanels((p.panels ?? []) as Json[])]);
}

/** Grafana's variables, replaced by values of the same PromQL type so the expression parses. */
function withVariables(expr: string): string {
  return expr
    .replace(/\$__(rate_interval|interval|range)\b/g, "5m")
    .replace(/\$\{?namespace\}?/g, "pepr-system");
}

interface Parsed {
  errors: string[];
  metrics: string[];
  matcherLabels: string[];
  groupingLabels: string[];
}

function parse(expr: string): Parsed {
  const out: Parsed = { errors: [], metrics: [], matcherLabels: [], groupingLabels: [] };
  const tree = parser.parse(expr);
  const text = (n: SyntaxNode) => expr.slice(n.from, n.to);
  tree.iterate({
    enter: ref => {
      const node = ref.node;
      if (ref.type.isError)
        out.errors.push(`at ${ref.from}: ${JSON.stringify(expr.slice(ref.from, ref.from + 20))}`);
      if (ref.name === "Identifier" && node.parent?.name === "VectorSelector")
        out.metrics.push(text(node));
      if (ref.name === "LabelName" && node.parent?.name === "UnquotedLabelMatcher") {
        out.matcherLabels.push(text(node));
      }
      if (ref.name === "LabelName" && node.parent?.name === "GroupingLabels") {
        out.groupingLabels.push(text(node));
      }
    },
  });
  return out;
}

const targets = allPanels(dashboard.panels).flatMap(p =>
  ((p.targets ?? []) as { expr: string }[]).map(t => ({ panel: String(p.title), expr: t.expr })),
);

describe("the Grafana dashboard", () => {
  const series = served();

  it("has a query in every panel that is not a row", () => {
    for (const p of allPanels(dashboard.panels).filter(p => p.type !== "row")) {
      expect({ panel: p.title, queries: ((p.targets ?? []) as unknown[]).length > 0 }).toEqual({
        panel: p.title,
        queries: true,
      });
    }
  });

  it.each(targets)("$panel: `$expr` parses as PromQL", ({ expr }) => {
    expect(parse(withVariables(expr)).errors).toEqual([]);
  });

  it.each(targets)(
    "$panel: `$expr` names only series krply serves, by their labels",
    ({ expr }) => {
      const parsed = parse(withVariables(expr));
      const unknown = parsed.metrics.filter(m => !series.has(m));
      expect(unknown).toEqual([]);
      // A label a query filters or groups on must exist on some series it reads.
      const labels = new Set(parsed.metrics.flatMap(m => [...(series.get(m) ?? [])]));
      const stray = [...parsed.matcherLabels, ...parsed.groupingLabels].filter(l => !labels.has(l));
      expect(stray).toEqual([]);
    },
  );

  it("reads its namespace variable from a series krply serves", () => {
    const variable = dashboard.templating.list.find(v => v.name === "namespace") as {
      definition: string;
    };
    const [, metric] = /^label_values\((\w+),\s*namespace\)$/.exec(variable.definition) ?? [];
    expect(series.has(metric)).toBe(true);
  });

  it("charts ingest rate, lag, gaps, degraded streams, journal bytes and API latency", () => {
    const used = new Set(targets.flatMap(t => parse(withVariables(t.expr)).metrics));
    for (const name of [
      "krply_events_ingested_total",
      "krply_ingest_lag_seconds_bucket",
      "krply_gaps_total",
      "krply_streams_degraded",
      "krply_journal_bytes",
      "krply_journal_budget_bytes",
      "krply_api_request_duration_seconds_bucket",
    ]) {
      expect({ name, used: used.has(name) }).toEqual({ name, used: true });
    }
  });

  it("rejects a query with a name krply does not serve (the check is not vacuous)", () => {
    const parsed = parse("rate(krply_no_such_metric_total[5m])");
    expect(parsed.errors).toEqual([]);
    expect(parsed.metrics.filter(m => !series.has(m))).toEqual(["krply_no_such_metric_total"]);
    expect(parse("sum(rate(x[5m]) by").errors.length).toBeGreaterThan(0);
  });
});
