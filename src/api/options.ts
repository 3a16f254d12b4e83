import type { ApiSettings } from "../config";
import type { Authorizer } from "./authorizer";
import type { QueryName } from "./queries";
import { ROUTES } from "./routes";
import type { ApiServerOptions } from "./server";

/**
 * Queries that run in the worker pool. Their cost grows with the journal (every object, or every
 * version of one object), or, for a page of events, is a hundred decoded bodies (a few ms of CPU):
 * on the event loop it would hold every other request. The rest (stream list, coverage, status) are
 * bounded, cheap index reads on the main thread.
 */
export const DEFAULT_OFFLOAD: ReadonlySet<QueryName> = new Set<QueryName>([
  "takeSnapshot",
  "snapshotObjects",
  "diff",
  "search",
  "exportPage",
  "history",
  "historyMarked",
  "events",
  "eventsPageText",
  "attribution",
  "objectAt",
  "who",
]);

/**
 * Of those, the queries whose cost grows with the whole journal (every object): they run on one
 * background worker at low CPU priority, so they never queue in front of, or take the cores from,
 * the per-object reads (history, objectAt, attribution) on the other workers.
 */
export const DEFAULT_BACKGROUND: ReadonlySet<QueryName> = new Set<QueryName>([
  "takeSnapshot",
  "snapshotObjects",
  "diff",
  "search",
  "exportPage",
  "who",
]);

/**
 * Each view of the sidecar (the main thread's and one per worker) maps nothing and keeps a 4 MiB
 * page cache: mapped pages count in resident memory once per view, which put four views of a 330 MB
 * journal over 700 MiB. Reads then come from the kernel's page cache, shared by all of them; 4 MiB
 * holds the index pages a page of events or a history walks through.
 */
export const SIDECAR_VIEW = { mmapBytes: 0, pageCacheKiB: 4096 } as const;

/**
 * The background lane's view keeps 1 MiB: a snapshot walks every object once, so few of the pages
 * it reads are read again, and the lane's memory is what a snapshot a second adds to the sidecar.
 */
export const BACKGROUND_PAGE_CACHE_KIB = 1024;

/** Server options from the configuration. */
export function serverOptionsOf(
  journalPath: string,
  api: ApiSettings,
  authorizer: Authorizer,
): ApiServerOptions {
  return {
    journalPath,
    host: api.host,
    port: api.port,
    authorizer,
    corsOrigins: api.corsOrigins,
    workers: api.workers,
    queryTimeoutMs: api.queryTimeoutMs,
    maxQueue: api.maxQueue,
    maxBodyBytes: api.maxBodyBytes,
    busyTimeoutMs: 5000,
    shutdownGraceMs: api.shutdownGraceMs,
    routes: ROUTES,
    offload: DEFAULT_OFFLOAD,
    background: DEFAULT_BACKGROUND,
    view: SIDECAR_VIEW,
    backgroundPageCacheKiB: BACKGROUND_PAGE_CACHE_KIB,
    answerCacheBytes: api.answerCacheMiB * 1024 * 1024,
  };
}
