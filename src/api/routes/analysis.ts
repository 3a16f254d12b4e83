// Questions over many objects: what changed between two times, and which objects ever existed.
import { z } from "zod";
import { READ, route } from "../route";
import { AnswerOf, anyJson, cluster, flag, isoTime, namespace, nameText, text } from "../schemas";

export const analysisRoutes = [
  route({
    method: "GET",
    path: "/v1/diff",
    summary: "Objects added, removed and changed between two times, with attributed field changes",
    tag: "analysis",
    action: READ,
    query: z.strictObject({
      cluster,
      namespace,
      before: isoTime("before"),
      after: isoTime("after"),
      status: flag(false).describe("Include status changes."),
    }),
    response: AnswerOf(
      z.object({
        clusterId: z.string(),
        namespace: z.string().nullable(),
        before: z.string(),
        after: z.string(),
        objects: z.array(anyJson),
        hasGaps: z.boolean(),
      }),
    ),
    handle: async ({ queries, query }) => ({
      json: await queries.answer("diff", {
        cluster: query.cluster,
        namespace: query.namespace || undefined,
        before: query.before,
        after: query.after,
        includeStatus: query.status,
      }),
    }),
  }),
  route({
    method: "GET",
    path: "/v1/search",
    summary: "Objects whose name starts with a prefix, with the time ranges each existed",
    tag: "analysis",
    action: READ,
    query: z.strictObject({
      cluster,
      kind: nameText("kind").optional(),
      name: text("name", 253).describe("Name prefix; empty matches every name.").optional(),
      labels: text("labels", 1024)
        .optional()
        .describe("Equality label selector, e.g. app=web,tier=db."),
    }),
    response: AnswerOf(
      z.array(
        z.object({
          clusterId: z.string(),
          kind: z.string(),
          group: z.string(),
          namespace: z.string(),
          name: z.string(),
          ranges: z.array(anyJson),
        }),
      ),
    ),
    handle: async ({ queries, query }) => ({
      json: await queries.answer("search", {
        cluster: query.cluster,
        kind: query.kind,
        name: query.name ?? "",
        labels: query.labels,
      }),
    }),
  }),
];
