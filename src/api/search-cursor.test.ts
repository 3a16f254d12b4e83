import { ApiError } from "./errors";
import { writeCursor } from "./history-cursor";
import { decodeSearchCursor, encodeSearchCursor } from "./search-cursor";
import type { SearchKey } from "../materialize";

const q = { name: "web", kind: "ConfigMap", labels: "app=shop" };
const key: SearchKey = ["c1", "ConfigMap", "shop", "web-1", "", 42];

function rejection(f: () => unknown): { message: string; path?: string } {
  try {
    f();
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    const e = err as ApiError;
    return { message: e.message, path: e.fields[0]?.path };
  }
  throw new Error("no rejection");
}

describe("search cursors", () => {
  it("give back the key they were made with, for the same filters", () => {
    expect(decodeSearchCursor(encodeSearchCursor(key, q), { ...q })).toEqual(key);
  });

  it("refuse other filters, junk and cursors of another kind, naming the cursor", () => {
    const c = encodeSearchCursor(key, q);
    expect(rejection(() => decodeSearchCursor(c, { ...q, labels: undefined }))).toEqual({
      message: "cursor belongs to another search",
      path: "cursor",
    });
    for (const junk of ["abc", writeCursor({ h: 3, o: "x" }), writeCursor({ s: [1, 2], q: "x" })]) {
      expect(rejection(() => decodeSearchCursor(junk, q))).toEqual({
        message: "invalid cursor",
        path: "cursor",
      });
    }
  });
});
