// Questions over many objects: what changed between two times, and which objects ever existed.
import { z } from "zod";
import { READ, route } from "../route";
import {
  AnswerOf,
  anyJson,
  cluster,
  flag,
  isoTime,
  namespace,
  nameText,
  text,
  wholeNumber,
} from "../schemas";
import { decodeSearchCursor, encodeSearchCursor } from "../search-cursor";

/** Hits per search page at most; a page also examines at most SEARCH_EXAMINED_PER_PAGE objects. */
export const MAX_SEARCH_PAGE = 500;

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
    description:
      "Objects are examined in order of cluster, kind, namespace, name and group. A page holds up to " +
      "limit hits and examines a bounded number of objects, so it may hold fewer hits than limit " +
      "and still have a next page: pass nextCursor back as cursor, with the same filters.",
    tag: "analysis",
    action: READ,
    query: z.strictObject({
      cluster,
      kind: nameText("kind").optional(),
      name: text("name", 253).describe("Name prefix; empty matches every name.").optional(),
      labels: text("labels", 1024)
        .optional()
        .describe("Equality label selector, e.g. app=web,tier=db."),
      limit: wholeNumber(1, MAX_SEARCH_PAGE, 100).describe(
        `Hits per page, 1-${MAX_SEARCH_PAGE} (default 100).`,
      ),
      cursor: text("cursor", 1024).min(1).optional(),
    }),
    response: AnswerOf(
      z.object({
        hits: z.array(
          z.object({
            clusterId: z.string(),
            kind: z.string(),
            group: z.string(),
            namespace: z.string(),
            name: z.string(),
            ranges: z.array(anyJson),
          }),
        ),
        nextCursor: z.string().nullable(),
      }),
    ),
    handle: async ({ queries, query }) => {
      const q = {
        cluster: query.cluster,
        kind: query.kind,
        name: query.name ?? "",
        labels: query.labels,
      };
      const after = query.cursor === undefined ? undefined : decodeSearchCursor(query.cursor, q);
      // The worker answers with the page's last key; the cursor is made here, bound to the filters.
      const page = await queries.run("search", { ...q, limit: query.limit, after });
      const { next, hits } = page.data;
      return {
        json: {
          ...page,
          data: { hits, nextCursor: next === null ? null : encodeSearchCursor(next, q) },
        },
      };
    },
  }),
];
