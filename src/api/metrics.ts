import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { PoolObserver } from "./pool";

/** The sidecar's own metrics, on a registry of its own that GET /metrics serves. */
export interface ApiMetrics {
  registry: Registry;
  requests: Counter<"route" | "method" | "status">;
  duration: Histogram<"route" | "method">;
  queueDepth: Gauge;
  busyWorkers: Gauge;
  timeouts: Counter<"query">;
  replacements: Counter;
  answerCache: Counter<"result">;
  answerCacheBytes: Gauge;
  eventsCache: Counter<"result">;
  pool: PoolObserver;
}

/** Every metric name the sidecar serves (docs/api.md lists them; a test scrapes for each). */
export const API_METRIC_NAMES = [
  "krply_api_requests_total",
  "krply_api_request_duration_seconds",
  "krply_api_pool_queue_depth",
  "krply_api_pool_busy_workers",
  "krply_api_query_timeouts_total",
  "krply_api_worker_replacements_total",
  "krply_api_answer_cache_total",
  "krply_api_answer_cache_bytes",
  "krply_api_events_cache_total",
  "krply_api_process_resident_memory_bytes",
] as const;

export function apiMetrics(busy: () => number = () => 0): ApiMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "krply_api_" });
  const requests = new Counter({
    name: "krply_api_requests_total",
    help: "Requests answered, by route template, method and status",
    labelNames: ["route", "method", "status"] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: "krply_api_request_duration_seconds",
    help: "Time from request to the end of the answer, by route template",
    labelNames: ["route", "method"] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const queueDepth = new Gauge({
    name: "krply_api_pool_queue_depth",
    help: "Queries waiting for a worker",
    registers: [registry],
  });
  const busyWorkers = new Gauge({
    name: "krply_api_pool_busy_workers",
    help: "Workers running a query",
    registers: [registry],
    collect() {
      this.set(busy());
    },
  });
  const timeouts = new Counter({
    name: "krply_api_query_timeouts_total",
    help: "Queries cancelled past their time limit, by query",
    labelNames: ["query"] as const,
    registers: [registry],
  });
  const replacements = new Counter({
    name: "krply_api_worker_replacements_total",
    help: "Workers replaced after a cancelled query or a crash",
    registers: [registry],
  });
  const answerCache = new Counter({
    name: "krply_api_answer_cache_total",
    help: "History pages asked for, by how the answer cache met them: hit, stale (the journal moved) or miss",
    labelNames: ["result"] as const,
    registers: [registry],
  });
  const answerCacheBytes = new Gauge({
    name: "krply_api_answer_cache_bytes",
    help: "Bytes of answers kept for questions asked again: history pages and events pages, one budget",
    registers: [registry],
  });
  const eventsCache = new Counter({
    name: "krply_api_events_cache_total",
    help: "Events pages asked for, by how the page cache met them: hit, stale (records were removed since) or miss",
    labelNames: ["result"] as const,
    registers: [registry],
  });
  return {
    registry,
    answerCache,
    eventsCache,
    answerCacheBytes,
    requests,
    duration,
    queueDepth,
    busyWorkers,
    timeouts,
    replacements,
    pool: {
      queued: depth => queueDepth.set(depth),
      timedOut: query => timeouts.inc({ query }),
      replaced: () => replacements.inc(),
    },
  };
}
