// The opaque cursor of a search page: the sort key of the last object the page examined, bound to
// the question it answers, so a cursor passed with other filters is an error rather than a skip.
import type { SearchKey } from "../materialize";
import { bindingKey, invalidCursor, readCursor, writeCursor } from "./history-cursor";

/** The filters a search cursor belongs to. */
export interface SearchCursorQuery {
  cluster?: string;
  kind?: string;
  name: string;
  labels?: string;
}

const queryKey = (q: SearchCursorQuery): string =>
  bindingKey([q.cluster ?? null, q.kind ?? null, q.name, q.labels ?? null]);

/** A cursor that starts the next page of this search after `after`. */
export function encodeSearchCursor(after: SearchKey, q: SearchCursorQuery): string {
  return writeCursor({ s: after, q: queryKey(q) });
}

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
    throw invalidCursor("invalid cursor", "not a search cursor this server made");
  if (c.q !== queryKey(q))
    throw invalidCursor(
      "cursor belongs to another search",
      "was made for other filters; start again without it",
    );
  return c.s;
}
