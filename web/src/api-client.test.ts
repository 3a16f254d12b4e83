import {
  ApiFailure,
  apiClient,
  failureOf,
  parseAnswer,
  pathWith,
  type TokenStore,
} from "./api-client";

const coverage = { complete: true, gaps: [], downWindows: [], unrecorded: [], prunedBefore: null };

function memoryTokens(initial: string | null = null): TokenStore & { value: string | null } {
  const s = {
    value: initial,
    get: () => s.value,
    set: (t: string | null) => {
      s.value = t;
    },
  };
  return s;
}

function respond(status: number, body: unknown) {
  return new Response(typeof body === "string" ? body : JSON.stringify(body), { status });
}

describe("the UI's API client", () => {
  it("sends the stored token only as a bearer token and no cookies", async () => {
    const seen: { url: string; init: RequestInit }[] = [];
    const api = apiClient(
      async (url, init) => {
        seen.push({ url, init });
        return respond(200, { data: [], coverage, warnings: [] });
      },
      memoryTokens("tok"),
      () => undefined,
    );
    await api.get("/v1/streams", { cluster: "c1", at: undefined, ns: "" });
    expect(seen[0].url).toBe("/v1/streams?cluster=c1");
    expect(seen[0].init.headers).toMatchObject({ authorization: "Bearer tok" });
    expect(seen[0].init.credentials).toBe("omit");
    const anon = apiClient(
      async (_u, init) => {
        expect(init.headers).not.toHaveProperty("authorization");
        return respond(200, { data: 1 });
      },
      memoryTokens(),
      () => undefined,
    );
    await anon.post("/v1/replay-runs", { plan: "rp-1", confirm: true });
  });

  it("turns the sidecar's error shape into a failure and tells about a 401", async () => {
    const denied: ApiFailure[] = [];
    const api = apiClient(
      async () =>
        respond(401, {
          error: { status: 401, code: "unauthenticated", message: "no bearer token", fields: [] },
        }),
      memoryTokens(),
      f => denied.push(f),
    );
    await expect(api.get("/v1/streams")).rejects.toMatchObject({
      status: 401,
      code: "unauthenticated",
      message: "no bearer token",
    });
    expect(denied).toHaveLength(1);
  });

  it("reports a network failure and a non-JSON answer as errors, never as data", async () => {
    const down = apiClient(
      async () => Promise.reject(new TypeError("fetch failed")),
      memoryTokens(),
      () => undefined,
    );
    await expect(down.get("/v1/streams")).rejects.toMatchObject({ code: "network" });
    const junk = apiClient(
      async () => respond(200, "<html>"),
      memoryTokens(),
      () => undefined,
    );
    await expect(junk.get("/v1/streams")).rejects.toMatchObject({ code: "bad_answer" });
    const proxy = apiClient(
      async () => respond(502, "Bad Gateway"),
      memoryTokens(),
      () => undefined,
    );
    await expect(proxy.get("/v1/streams")).rejects.toMatchObject({
      status: 502,
      code: "http_error",
    });
  });

  it("accepts an answer only with its coverage", () => {
    expect(parseAnswer({ data: [1], coverage, warnings: ["w"] }).warnings).toEqual(["w"]);
    // Older answers without down windows still parse, with none.
    const old = parseAnswer({
      data: 1,
      coverage: { complete: false, gaps: [], prunedBefore: null },
      warnings: [],
    });
    expect(old.coverage.downWindows).toEqual([]);
    expect(() => parseAnswer({ data: [] })).toThrow(ApiFailure);
  });

  it("keeps field errors and builds query strings without empty values", () => {
    const f = failureOf(400, {
      error: {
        status: 400,
        code: "invalid_input",
        message: "bad",
        fields: [{ in: "query", path: "at", message: "no" }],
      },
    });
    expect(f.fields).toEqual([{ in: "query", path: "at", message: "no" }]);
    expect(pathWith("/v1/search", { name: "", kind: "cm" })).toBe("/v1/search?kind=cm");
  });
});
