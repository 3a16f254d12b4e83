import type { ApiSettings } from "../config";
import type { Authorizer } from "./authorizer";
import type { QueryName } from "./queries";
import { ROUTES } from "./routes";
import type { ApiServerOptions } from "./server";

/**
 * Queries that run in the worker pool. Their cost grows with the journal (every object, or every
 * version of one object), so they must not hold the event loop, and they need a time limit. The rest
 * (stream list, coverage, one page of events) are bounded, cheap index reads on the main thread.
 */
export const DEFAULT_OFFLOAD: ReadonlySet<QueryName> = new Set<QueryName>([
  "takeSnapshot",
  "snapshotObjects",
  "diff",
  "search",
  "exportPage",
  "history",
  "attribution",
  "objectAt",
  "who",
]);

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
  };
}
