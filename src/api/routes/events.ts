// Records in journal order: a page at a time with an opaque cursor, or all of them as NDJSON.
import { z } from "zod";
import { eventsAnswer } from "../event-pages";
import type { EventFilters } from "../queries";
import { READ, route, type QueryRunner } from "../route";
import { AnswerOf, anyJson, eventFilters, flag, text, wholeNumber } from "../schemas";

/** The most records one events page holds. */
export const MAX_PAGE = 1000;
/** Records per worker round trip of an export. */
const EXPORT_PAGE = 500;

function filtersOf(q: EventFilters): EventFilters {
  const f: EventFilters = {};
  for (const [k, v] of Object.entries(q) as [keyof EventFilters, never][])
    if (v !== undefined) f[k] = v;
  return f;
}

async function* exportLines(
  queries: QueryRunner,
  filters: EventFilters,
  max: number,
  signal: AbortSignal,
): AsyncGenerator<string> {
  let cursor: string | undefined;
  let sent = 0;
  while (sent < max && !signal.aborted) {
    // Each page is its own query with its own time limit, so a long export never holds a worker.
    const page = await queries.run("exportPage", {
      filters,
      limit: Math.min(EXPORT_PAGE, max - sent),
      cursor,
    });
    if (page.records.length > 0) yield page.records.map(r => JSON.stringify(r)).join("\n") + "\n";
    sent += page.records.length;
    if (!page.nextCursor) return;
    cursor = page.nextCursor;
  }
}

export const eventRoutes = [
  route({
    method: "GET",
    path: "/v1/events",
    summary: "Journal records in ingest order, filtered, one page at a time",
    description: `Pass nextCursor back as cursor, with the same filters, for the next page. limit is at most ${MAX_PAGE}.`,
    tag: "events",
    action: READ,
    query: z.strictObject({
      ...eventFilters,
      limit: wholeNumber(1, MAX_PAGE, 100).describe(
        `Records per page, 1-${MAX_PAGE} (default 100).`,
      ),
      cursor: text("cursor", 512).min(1).optional(),
      objects: flag(true).describe("Include each record's object (false is cheaper)."),
    }),
    response: AnswerOf(z.object({ records: z.array(anyJson), nextCursor: z.string().nullable() })),
    handle: async ({ queries, query, app }) => {
      const { limit, cursor, objects, ...f } = query;
      return {
        json: await eventsAnswer(queries, app.eventPages, {
          filters: filtersOf(f),
          limit,
          cursor,
          objects,
        }),
      };
    },
  }),
  route({
    method: "GET",
    path: "/v1/export",
    summary: "Every matching record as NDJSON, streamed",
    description:
      "One journal record per line. The answer's coverage (gaps over the range) is in the krply-coverage header, " +
      "computed before the first line; an error after streaming began is the last line, as the error shape.",
    tag: "events",
    action: READ,
    query: z.strictObject({
      ...eventFilters,
      max: wholeNumber(1, 100_000_000, 100_000_000).describe("Stop after this many records."),
    }),
    response: { contentType: "application/x-ndjson", description: "One JSON record per line" },
    handle: async ({ queries, query, signal }) => {
      const { max, ...f } = query;
      const cov = await queries.run("exportCoverage", { filters: filtersOf(f) });
      return {
        contentType: "application/x-ndjson",
        headers: {
          "krply-coverage": JSON.stringify(cov.answer.coverage),
          "content-disposition": 'attachment; filename="krply-export.ndjson"',
        },
        stream: exportLines(queries, cov.filters, max, signal),
      };
    },
  }),
];
