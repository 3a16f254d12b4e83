// One object: its history, its state at a time or resourceVersion, and who changed which field.
import { z } from "zod";
import type { At } from "../../materialize";
import { ApiError } from "../errors";
import { READ, route } from "../route";
import {
  AnswerOf,
  anyJson,
  flag,
  isoTime,
  RefParams,
  refQuery,
  text,
  wholeNumber,
} from "../schemas";

/** Versions per history page unless asked otherwise, and the most one page holds. */
export const HISTORY_PAGE = 200;
export const MAX_HISTORY_PAGE = 1000;

/** `at`: an ISO time, or `rv:<resourceVersion>` of the object's stream. */
const atParam = z
  .string()
  .min(1, "at is empty")
  .max(300, "at is too long")
  .transform((v, ctx): At => {
    if (v.startsWith("rv:")) {
      const rv = v.slice(3);
      if (!/^[^\s\p{Cc}]{1,256}$/u.test(rv)) {
        ctx.addIssue({ code: "custom", message: "rv:<resourceVersion> needs a resourceVersion" });
        return z.NEVER;
      }
      return { resourceVersion: rv };
    }
    const t = isoTime("at").safeParse(v);
    if (!t.success) {
      ctx.addIssue({
        code: "custom",
        message: "at must be an ISO 8601 time or rv:<resourceVersion>",
      });
      return z.NEVER;
    }
    return { time: t.data };
  })
  .describe("An ISO 8601 time, or rv:<resourceVersion> (RVs are compared only within one stream).");

const ref = (
  p: z.output<typeof RefParams>,
  q: { cluster?: string; namespace?: string; group?: string },
) => ({
  cluster: q.cluster,
  kind: p.kind,
  name: p.name,
  namespace: q.namespace ?? "",
  ...(q.group ? { group: q.group } : {}),
});

const Provenance = z
  .object({
    streamId: z.string(),
    eventId: z.string(),
    resourceVersion: z.string(),
    observedAt: z.string(),
  })
  .loose();

/** Who owns a changed field in the later version: a managedFields entry, and how it was found. */
const Manager = z
  .object({
    manager: z.string(),
    operation: z.string(),
    time: z.string().nullable(),
    basis: z.string(),
  })
  .loose();

/** A field change of a history entry, in materialize's TimelineChange's few bytes. */
const HistoryChange = z.strictObject({
  path: z
    .string()
    .describe(
      "The field, as spec.containers[name=app].image: map keys joined by dots (a dot, bracket " +
        "or backslash in a key escaped with a backslash), [N] a list index, [key=value] a list " +
        "item by its key field (a value that would read as a number, boolean or quoted string " +
        "is JSON-quoted).",
    ),
  added: z.literal(true).optional().describe("Present (true) when the field is new: no before."),
  removed: z.literal(true).optional().describe("Present (true) when the field is gone: no after."),
  before: anyJson.optional().describe("The value before; absent when the field was added."),
  after: anyJson.optional().describe("The value after; absent when the field was removed."),
  managers: z.array(Manager).describe("Its owners in the later version, newest first."),
});

export const objectRoutes = [
  route({
    method: "GET",
    path: "/v1/objects/{kind}/{name}/history",
    summary: "Every recorded change of an object, with gaps in its stream as entries of their own",
    description:
      `A page of the timeline, oldest first: at most limit versions (default ${HISTORY_PAGE}, at most ` +
      `${MAX_HISTORY_PAGE}), with the gaps that start among them as entries of their own. Pass ` +
      "nextCursor (or previousCursor) back as cursor, for the same object, for the next (or " +
      "previous) page. Each page's coverage and warnings name the gaps and recorder down windows " +
      "that touch its span (from the version before it to its last version; the last page on to " +
      "now), and, on the first page, the retention horizon.",
    tag: "objects",
    action: READ,
    params: RefParams,
    query: z.strictObject({
      ...refQuery,
      status: flag(false).describe("Include status changes."),
      limit: wholeNumber(1, MAX_HISTORY_PAGE, HISTORY_PAGE).describe("Versions per page."),
      cursor: text("cursor", 512)
        .min(1)
        .optional()
        .describe("A page's nextCursor or previousCursor."),
    }),
    response: AnswerOf(
      z.object({
        entries: z.array(
          z.object({
            kind: z.enum(["version", "gap"]),
            observedAt: z.string(),
            resourceVersion: z.string().nullable(),
            watchType: z.string().nullable(),
            recordType: z.string(),
            synthetic: z.boolean(),
            streamId: z.string(),
            changes: z.array(HistoryChange),
            manager: z.string().nullable(),
            note: z.string().nullable(),
          }),
        ),
        nextCursor: z
          .string()
          .nullable()
          .describe("The next page's cursor; null on the last page."),
        previousCursor: z
          .string()
          .nullable()
          .describe("The previous page's cursor; null on the first page."),
        start: z
          .number()
          .int()
          .describe("How many of the object's versions come before this page."),
        total: z
          .number()
          .int()
          .describe("Versions of the object in all (gap entries not counted)."),
      }),
    ),
    handle: async ({ queries, params, query }) => ({
      json: await queries.answer("history", {
        ...ref(params, query),
        includeStatus: query.status,
        limit: query.limit,
        cursor: query.cursor,
      }),
    }),
  }),
  route({
    method: "GET",
    path: "/v1/objects/{kind}/{name}",
    summary: "The object as it stood at a time or resourceVersion, with provenance",
    tag: "objects",
    action: READ,
    params: RefParams,
    query: z.strictObject({
      ...refQuery,
      at: atParam.optional(),
      rv: z
        .string()
        .regex(/^[^\s\p{Cc}]{1,256}$/u, "must be a resourceVersion")
        .optional()
        .describe("A resourceVersion of the object's stream; the same as at=rv:<RV>."),
      stream: text("stream", 2048)
        .min(1)
        .optional()
        .describe("Stream of an rv: point, when the object is on several."),
    }),
    response: AnswerOf(
      z.object({
        exists: z.boolean(),
        object: z
          .object({
            kind: z.string(),
            group: z.string(),
            namespace: z.string(),
            name: z.string(),
            object: anyJson,
            provenance: Provenance,
          })
          .nullable(),
      }),
    ),
    handle: async ({ queries, params, query }) => {
      if (query.at !== undefined && query.rv !== undefined) {
        throw new ApiError("invalid_input", "give at or rv, not both", [
          { in: "query", path: "rv", message: "cannot be combined with at" },
        ]);
      }
      let at: At =
        query.at ?? (query.rv ? { resourceVersion: query.rv } : { time: new Date().toISOString() });
      if ("resourceVersion" in at && query.stream) at = { ...at, streamId: query.stream };
      return { json: await queries.answer("objectAt", { ...ref(params, query), at }) };
    },
  }),
  route({
    method: "GET",
    path: "/v1/objects/{kind}/{name}/attribution",
    summary: "Who changed which field and when: each recorded field change with its field managers",
    tag: "objects",
    action: READ,
    params: RefParams,
    query: z.strictObject({
      ...refQuery,
      path: text("path", 1024)
        .min(1)
        .optional()
        .describe("Only this field and below, e.g. spec.replicas."),
      since: isoTime("since").optional(),
      until: isoTime("until").optional(),
      status: flag(false).describe("Include status changes."),
    }),
    response: AnswerOf(
      z.array(
        z.object({
          observedAt: z.string(),
          resourceVersion: z.string().nullable(),
          streamId: z.string(),
          path: z.string(),
          before: anyJson,
          after: anyJson,
          removed: z.boolean().optional(),
          managers: z.array(Manager),
        }),
      ),
    ),
    handle: async ({ queries, params, query }) => ({
      json: await queries.answer("attribution", {
        ...ref(params, query),
        path: query.path,
        since: query.since,
        until: query.until,
        includeStatus: query.status,
      }),
    }),
  }),
];
