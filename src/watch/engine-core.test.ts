import { ApiError, NetworkError } from "../kube/errors";
import { backoffDelay, randomTimeoutSeconds } from "./backoff";
import { classify, decide, MalformedLineError, SinkError, StalledError } from "./decide";
import { LineSplitter } from "./line-splitter";
import { mirrorTick } from "./mirror";
import { parseListPage, parseWatchLine } from "./parse";
import { resumePointOf } from "./supervisor";

const opts = { backoff: { minMs: 100, maxMs: 10_000 }, slowRetryMs: 30_000 };
const fixed = (v: number) => () => v;

describe("LineSplitter", () => {
  it("joins a line torn at every possible byte, including inside multi-byte characters", () => {
    const text = '{"a":"héllo ✓ 😀"}\n{"b":2}\n';
    const bytes = Buffer.from(text);
    for (let cut = 1; cut < bytes.length; cut++) {
      const s = new LineSplitter();
      const lines = [...s.push(bytes.subarray(0, cut)), ...s.push(bytes.subarray(cut))];
      expect(lines).toEqual(['{"a":"héllo ✓ 😀"}', '{"b":2}']);
      expect(s.pending).toBe(0);
    }
  });

  it("keeps an unterminated tail pending and skips blank lines and CR", () => {
    const s = new LineSplitter();
    expect(s.push("\n\r\n{}\r\n{")).toEqual(["{}"]);
    expect(s.pending).toBe(1);
    expect(s.takeRest()).toBe("{");
  });

  it("refuses a line that grows past the limit", () => {
    const s = new LineSplitter(8);
    expect(() => s.push("0123456789")).toThrow(/longer than 8 bytes/);
  });
});

describe("backoff", () => {
  it("grows exponentially within bounds, with jitter in the upper half", () => {
    expect(backoffDelay(0, opts.backoff, fixed(0))).toBe(100);
    expect(backoffDelay(3, opts.backoff, fixed(0))).toBe(400);
    expect(backoffDelay(3, opts.backoff, fixed(1))).toBe(800);
    expect(backoffDelay(50, opts.backoff, fixed(1))).toBe(10_000);
    expect(backoffDelay(50, opts.backoff, fixed(0))).toBe(5_000);
  });

  it("spreads watch timeouts over the configured range", () => {
    expect(randomTimeoutSeconds(240, 480, fixed(0))).toBe(240);
    expect(randomTimeoutSeconds(240, 480, fixed(0.9999))).toBe(480);
  });
});

describe("decide", () => {
  const http = (status: number, reason: string, retryAfterMs?: number) =>
    classify(new ApiError("x", status, reason, undefined, retryAfterMs));

  it("turns 410 (HTTP or ERROR event) into a relist with a gap", () => {
    expect(decide(http(410, "Expired"), 0, opts, fixed(0))).toMatchObject({ do: "relist" });
    const prevKv = new ApiError(
      "etcd event received with PrevKv=nil",
      500,
      "InternalError",
      undefined,
    );
    expect(decide(classify(prevKv), 0, opts, fixed(0))).toMatchObject({ do: "relist" });
    expect(decide(http(500, "InternalError"), 0, opts, fixed(0))).toMatchObject({
      do: "reconnect",
    });
  });

  it("reconnects at once after a normal close and with backoff after faults", () => {
    expect(decide({ kind: "closed", message: "" }, 5, opts, fixed(0))).toEqual({
      do: "reconnect",
      delayMs: 0,
      reason: "watch closed by server",
    });
    for (const err of [
      new NetworkError("reset", "ECONNRESET"),
      new MalformedLineError("bad", "{"),
      new StalledError("silent"),
      new SinkError("disk"),
      new ApiError("x", 500, "InternalError", undefined),
    ]) {
      const a = decide(classify(err), 2, opts, fixed(0));
      expect(a).toMatchObject({ do: "reconnect", delayMs: 200 });
    }
  });

  it("honours Retry-After on 429 over the backoff", () => {
    expect(decide(http(429, "TooManyRequests", 7000), 0, opts, fixed(0))).toMatchObject({
      do: "reconnect",
      delayMs: 7000,
    });
    expect(decide(http(429, "TooManyRequests"), 0, opts, fixed(0))).toMatchObject({
      delayMs: 100,
    });
  });

  it("marks 403 and 404 unavailable, probing fast at first and then at the slow retry", () => {
    for (const s of [403, 404]) {
      expect(decide(http(s, "x"), 0, opts, fixed(0))).toEqual({
        do: "unavailable",
        delayMs: 100,
        status: s,
        reason: `${s} x`,
      });
      expect(decide(http(s, "x"), 20, opts, fixed(1))).toMatchObject({ delayMs: 30_000 });
    }
  });
});

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
    ]) {
      expect(parseWatchLine(l).type).toBe("malformed");
    }
  });

  it("validates list pages", () => {
    expect(
      parseListPage({ metadata: { resourceVersion: "5", continue: "c" }, items: null }),
    ).toEqual({ resourceVersion: "5", continueToken: "c", items: [] });
    expect(() => parseListPage({ metadata: {}, items: [] })).toThrow();
  });
});

describe("resume point and checkpoint mirror", () => {
  const info = {
    streamId: "s",
    key: {
      clusterId: "c",
      group: "",
      version: "v1",
      resource: "pods",
      namespace: "",
      selector: "",
    },
    lastResourceVersion: "42",
    lastObservedAt: null,
    baselinePresent: true,
    openGaps: 0,
    state: "active" as const,
  };

  it("resumes from the durable checkpoint, and relists only without a baseline or with an open gap", () => {
    expect(resumePointOf(undefined)).toEqual({ rv: null, needList: true, coverage: "unknown" });
    expect(resumePointOf(info)).toEqual({ rv: "42", needList: false, coverage: "unknown" });
    expect(resumePointOf({ ...info, openGaps: 1 }).needList).toBe(true);
    expect(resumePointOf({ ...info, baselinePresent: false }).needList).toBe(true);
    expect(resumePointOf({ ...info, state: "unavailable" }).coverage).toBe("unavailable");
  });

  it("writes one coalesced value, and nothing while the watermarks are unchanged", () => {
    const state = { last: null as string | null };
    const v = mirrorTick(state, { b: "2", a: "1" });
    expect(v).toBe('{"v":1,"watermarks":{"a":"1","b":"2"}}');
    state.last = v;
    expect(mirrorTick(state, { a: "1", b: "2" })).toBeNull();
    expect(mirrorTick(state, { a: "1", b: "3" })).not.toBeNull();
  });
});
