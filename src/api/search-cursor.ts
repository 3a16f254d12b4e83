// The opaque cursor of a search page: the sort key of the last object the page examined, bound to
// the question it answers, so a cursor passed with other filters is an error rather than a skip.
import { createHash } from "node:crypto";
import type { SearchKey } from "../materialize";
import { ApiError } from "./errors";
import { readCursor, writeCursor } from "./history-cursor";

/** The filters a search cursor belongs to. */
export interface SearchCursorQuery {
  cluster?: string;
  kind?: string;
  name: string;
  labels?: string;
}

function queryKey(q: SearchCursorQuery): string {
  const key = JSON.stringify([q.cluster ?? null, q.kind ?? null, q.name, q.labels ?? null]);
  return createHash("sha256").update(key).digest("base64url").slice(0, 12);
}

/** A cursor that starts the next page of this search after `after`. */
export function encodeSearchCursor(after: SearchKey, q: SearchCursorQuery): string {
  return writeCursor({ s: after, q: queryKey(q) });
}

const invalid = (message: string, detail: string) =>
  new ApiError("invalid_input", message, [{ in: "query", path: "cursor", message: detail }]);

function isSearchKey(v: unknown): v is SearchKey {
  return (
    Array.isArray(v) &&
    v.length === 6 &&
    v.slice(0, 5).every(x => typeof x === "string") &&
    Number.isSafeInteger(v[5])
  );
}

/** The key a cursor made by encodeSearchCursor starts after; a 400 for anything else. */
export function decodeSearchCursor(cursor: string, q: SearchCursorQuery): SearchKey {
  const c = readCursor(cursor) as { s?: unknown; q?: unknown } | null;
  if (!c || !isSearchKey(c.s) || typeof c.q !== "string")
    throw invalid("invalid cursor", "not a search cursor this server made");
  if (c.q !== queryKey(q))
    throw invalid(
      "cursor belongs to another search",
      "was made for other filters; start again without it",
    );
  return c.s;
}
