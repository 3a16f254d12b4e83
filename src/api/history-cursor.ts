// The opaque cursor of a history page: the journal position the page starts after, bound to the
// object it was made for, so a cursor passed with another object is an error rather than a skip.
import { createHash } from "node:crypto";
import { ApiError } from "./errors";

/** The resolved object a history cursor belongs to. */
export interface HistoryCursorRef {
  clusterId: string;
  kind: string;
  namespace: string;
  name: string;
  group?: string;
}

/** A short digest of what a cursor is bound to, so one passed with other arguments is caught. */
export function bindingKey(parts: unknown[]): string {
  return createHash("sha256").update(JSON.stringify(parts)).digest("base64url").slice(0, 12);
}

const refKey = (r: HistoryCursorRef): string =>
  bindingKey([r.clusterId, r.kind, r.namespace, r.name, r.group ?? null]);

/** An opaque cursor: a small JSON value, base64url. */
export const writeCursor = (value: unknown): string =>
  Buffer.from(JSON.stringify(value)).toString("base64url");

/** The value inside a cursor writeCursor made; null for anything else. */
export function readCursor(cursor: string): unknown {
  try {
    return JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    return null;
  }
}

/** A cursor that starts a page after journal position `after` of the object's history. */
export function encodeHistoryCursor(after: number, ref: HistoryCursorRef): string {
  return writeCursor({ h: after, o: refKey(ref) });
}

export const invalidCursor = (message: string, detail: string) =>
  new ApiError("invalid_input", message, [{ in: "query", path: "cursor", message: detail }]);

/** The position a cursor made by encodeHistoryCursor starts after; a 400 for anything else. */
export function decodeHistoryCursor(cursor: string, ref: HistoryCursorRef): number {
  const c = readCursor(cursor) as { h?: unknown; o?: unknown } | null;
  if (!c || !Number.isSafeInteger(c.h) || (c.h as number) < 0 || typeof c.o !== "string")
    throw invalidCursor("invalid cursor", "not a history cursor this server made");
  if (c.o !== refKey(ref))
    throw invalidCursor(
      "cursor belongs to another object",
      "was made for another object's history; start again without it",
    );
  return c.h as number;
}
