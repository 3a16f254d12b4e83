// What the journal covers: clusters, streams (state, baseline, watermark, gaps, lag) and coverage at a time.
import { z } from "zod";
import { READ, route } from "../route";
import { AnswerOf, cluster, isoTime, namespace } from "../schemas";

export const journalRoutes = [
  route({
    method: "GET",
    path: "/v1/status",
    summary: "The journal at a glance: size, records, streams by state, open gaps, last snapshot",
    tag: "journal",
    action: READ,
    query: z.strictObject({ cluster }),
    response: AnswerOf(
      z
        .object({
          journal: z.string(),
          sizeBytes: z.number(),
          records: z.number(),
          clusters: z.array(z.string()),
          streams: z.number(),
          streamsByState: z.record(z.string(), z.number()),
          openGaps: z.number(),
          prunedBefore: z.string().nullable(),
          lastSnapshot: z.unknown(),
        })
        .loose(),
    ),
    handle: async ({ queries, query }) => ({ json: await queries.run("status", query) }),
  }),
  route({
    method: "GET",
    path: "/v1/clusters",
    summary: "Clusters the journal holds, with their stream count, open gaps and last record",
    tag: "journal",
    action: READ,
    response: AnswerOf(
      z.array(
        z.object({
          clusterId: z.string(),
          streams: z.number(),
          openGaps: z.number(),
          lastObservedAt: z.string().nullable(),
        }),
      ),
    ),
    handle: async ({ queries }) => ({ json: await queries.run("clusters", {}) }),
  }),
  route({
    method: "GET",
    path: "/v1/streams",
    summary: "Every stream: state, baseline, last RV, gaps, lag (and down windows when recorded)",
    tag: "journal",
    action: READ,
    query: z.strictObject({ cluster }),
    response: AnswerOf(
      z.array(
        z
          .object({
            streamId: z.string(),
            key: z.record(z.string(), z.string()),
            lastResourceVersion: z.string().nullable(),
            lastObservedAt: z.string().nullable(),
            baselinePresent: z.boolean(),
            openGaps: z.number(),
            state: z.string(),
            gaps: z.array(z.unknown()),
            lagSeconds: z.number().nullable(),
          })
          .loose(),
      ),
    ),
    handle: async ({ queries, query }) => ({ json: await queries.run("streams", query) }),
  }),
  route({
    method: "GET",
    path: "/v1/coverage",
    summary: "Each stream's watermark and trustworthiness at a time (default now)",
    tag: "journal",
    action: READ,
    query: z.strictObject({ cluster, namespace, at: isoTime("at").optional() }),
    response: AnswerOf(
      z.object({ clusterId: z.string(), at: z.string(), streams: z.array(z.unknown()) }),
    ),
    handle: async ({ queries, query }) => ({
      json: await queries.run("coverage", {
        cluster: query.cluster,
        at: query.at,
        namespace: query.namespace || undefined,
      }),
    }),
  }),
];
