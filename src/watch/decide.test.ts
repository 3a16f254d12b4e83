import { ApiError, NetworkError } from "../kube/errors";
import {
  attemptFor,
  classify,
  countFailure,
  decide,
  MalformedLineError,
  SinkError,
  StalledError,
} from "./decide";

const opts = { backoff: { minMs: 100, maxMs: 10_000 }, slowRetryMs: 30_000 };
const fixed = (v: number) => () => v;

describe("classify", () => {
  it("maps each thrown kind onto its failure", () => {
    expect(classify(new MalformedLineError("bad", 1)).kind).toBe("malformed");
    expect(classify(new StalledError("silent")).kind).toBe("stalled");
    expect(classify(new SinkError("disk")).kind).toBe("journal");
    expect(classify(new NetworkError("reset", "ECONNRESET")).kind).toBe("network");
    expect(classify("a string")).toEqual({ kind: "network", message: "a string" });
    expect(classify(new ApiError("x", 429, "TooManyRequests", undefined, 7000))).toEqual({
      kind: "http",
      status: 429,
      reason: "TooManyRequests",
      message: "x",
      retryAfterMs: 7000,
    });
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
      new MalformedLineError("bad", 1),
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

  it("probes the first 403 after an outage quickly: denials count apart from network failures", () => {
    let a = { failures: 0, denials: 0 };
    const down = { kind: "network" as const, message: "ECONNREFUSED" };
    for (let i = 0; i < 25; i++) a = countFailure(down, a);
    const denial = http(403, "Forbidden");
    expect(decide(denial, attemptFor(denial, a), opts, fixed(1))).toMatchObject({
      do: "unavailable",
      delayMs: 100,
    });
    a = countFailure(denial, a);
    expect(attemptFor(denial, a)).toBe(1);
    expect(attemptFor(down, a)).toBe(26);
    expect(countFailure(down, a).denials).toBe(0);
  });
});
