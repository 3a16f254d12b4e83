// The server about itself: liveness, readiness, its OpenAPI document and its metrics.
import { z } from "zod";
import { ApiError } from "../errors";
import { route } from "../route";

export const systemRoutes = [
  route({
    method: "GET",
    path: "/v1/health",
    summary: "Liveness: the process answers",
    tag: "system",
    action: null,
    response: z.object({ status: z.literal("ok") }),
    handle: () => ({ json: { status: "ok" } }),
  }),
  route({
    method: "GET",
    path: "/v1/ready",
    summary: "Readiness: the journal is open and the workers are up",
    tag: "system",
    action: null,
    response: z.object({ status: z.literal("ready") }),
    handle: ({ app }) => {
      const why = app.notReady();
      if (why.length > 0) throw new ApiError("unavailable", `not ready: ${why.join(", ")}`);
      return { json: { status: "ready" } };
    },
  }),
  route({
    method: "GET",
    path: "/openapi.json",
    summary: "This API, as OpenAPI 3 generated from the routes' zod schemas",
    tag: "system",
    action: null,
    response: z.record(z.string(), z.unknown()),
    handle: ({ app }) => ({ json: app.openapi() }),
  }),
  route({
    method: "GET",
    path: "/metrics",
    summary: "The sidecar's Prometheus metrics",
    tag: "system",
    action: null,
    response: { contentType: "text/plain", description: "Prometheus text exposition" },
    handle: async ({ app }) => {
      const m = await app.metricsText();
      return {
        contentType: m.contentType,
        stream: (async function* () {
          yield m.text;
        })(),
      };
    },
  }),
];
