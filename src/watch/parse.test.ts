import { parseListPage, parseWatchLine } from "./parse";

describe("parseWatchLine", () => {
  const obj = { metadata: { name: "a", resourceVersion: "7" } };
  it("parses object events, bookmarks and errors", () => {
    expect(parseWatchLine(JSON.stringify({ type: "MODIFIED", object: obj }))).toMatchObject({
      type: "MODIFIED",
      resourceVersion: "7",
    });
    expect(
      parseWatchLine(
        JSON.stringify({ type: "BOOKMARK", object: { metadata: { resourceVersion: "9" } } }),
      ),
    ).toEqual({ type: "BOOKMARK", resourceVersion: "9" });
    expect(
      parseWatchLine(JSON.stringify({ type: "ERROR", object: { kind: "Status", code: 410 } })),
    ).toMatchObject({ type: "ERROR", status: { code: 410 } });
  });

  it("reports malformed lines instead of throwing", () => {
    for (const l of [
      "{nope",
      '{"type":"NOPE","object":{}}',
      '{"type":"ADDED","object":{"metadata":{}}}',
      '{"type":"BOOKMARK","object":{"metadata":{}}}',
    ]) {
      expect(parseWatchLine(l).type).toBe("malformed");
    }
  });
});

describe("parseListPage", () => {
  it("validates list pages", () => {
    expect(
      parseListPage({ metadata: { resourceVersion: "5", continue: "c" }, items: null }),
    ).toEqual({ resourceVersion: "5", continueToken: "c", items: [] });
    expect(() => parseListPage({ metadata: {}, items: [] })).toThrow();
  });
});
