import { parseJsonText } from "../kube/json";
import { MalformedLineError } from "./decide";
import { parseListPage, parseWatchLine } from "./parse";

// A Secret line cut and spliced by a broken proxy: JSON.parse's own message would quote it.
const VALUE = "aHVudGVyMi1jb3JyZWN0LWhvcnNl";
const GARBLED = `{"type":"MODIFIED","object":{"kind":"Secret","metadata":{"name":"db","resourceVersion":"5"},"data":{"password":${VALUE}}}}`;

/** Overlapping 6-character pieces of a value, so a quoted fragment of any part of it is caught. */
function fragments(text: string): string[] {
  const out: string[] = [];
  for (let i = 0; i + 6 <= text.length; i += 3) out.push(text.slice(i, i + 6));
  return out;
}

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

describe("parse errors", () => {
  it("never carry a fragment of a garbled Secret line", () => {
    expect(() => JSON.parse(GARBLED)).toThrow(VALUE.slice(0, 8)); // what Node itself would say
    const p = parseWatchLine(GARBLED);
    expect(p.type).toBe("malformed");
    const error = (p as { error: string }).error;
    const err = new MalformedLineError(`malformed watch line: ${error}`, GARBLED.length);
    // What a log line would hold: the message, every own property, the cause.
    const logged = JSON.stringify({ ...err, message: err.message, cause: err.cause });
    for (const f of fragments(VALUE)) expect(logged).not.toContain(f);
    expect(logged).not.toContain("password");
  });

  it("name the input and its length only, for answers and list pages too", () => {
    let message = "";
    try {
      parseJsonText(GARBLED, "GET /api/v1/secrets: the answer");
    } catch (err) {
      message = (err as Error).message;
      expect((err as Error).cause).toBeUndefined();
    }
    expect(message).toBe(
      `GET /api/v1/secrets: the answer is not valid JSON (${GARBLED.length} bytes)`,
    );
    const notList = { metadata: { resourceVersion: 5 }, items: [{ metadata: VALUE }] };
    expect(() => parseListPage(notList)).toThrow(/not a list/);
    try {
      parseListPage(notList);
    } catch (err) {
      expect((err as Error).message).not.toContain(VALUE.slice(0, 6));
    }
    const badEvent = parseWatchLine(JSON.stringify({ type: VALUE, object: {} }));
    expect((badEvent as { error: string }).error).not.toContain(VALUE.slice(0, 6));
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
