// The query sidecar: an HTTP server over a read-only journal view and a worker pool.
export { startApiServer, type ApiServer, type ApiServerOptions } from "./server";
export { ROUTES } from "./routes";
export { replayRoutes, type ReplayDeps } from "./routes/replay";
export { route, READ, type Route, type RouteDef, type RouteContext, type Reply } from "./route";
export {
  noAuth,
  assertBindAllowed,
  isLoopback,
  bearerToken,
  missingToken,
  type Authorizer,
  type Action,
  type ActionResource,
  type Principal,
} from "./authorizer";
export { ApiError, type ErrorBody, type ErrorCode, type FieldError } from "./errors";
export { API_METRIC_NAMES, apiMetrics } from "./metrics";
export { openApiDocument } from "./openapi";
export { DEFAULT_BACKGROUND, DEFAULT_OFFLOAD, SIDECAR_VIEW, serverOptionsOf } from "./options";
export { encodeCursor, decodeCursor, type EventFilters } from "./queries";
export { clusterReviewApi, kubernetesAuthorizer } from "./auth";
