import { request } from "node:http";
import {
  call,
  scriptedJournalFile,
  startApiServer,
  testServerOptions,
} from "../../test/support/api-fixtures";
import { at } from "../../test/support/journal-fixtures";
import type { ApiServer } from "./server";
import { API_METRIC_NAMES } from "./metrics";
import { ROUTES } from "./routes";
import { ApiError } from "./errors";
import { route } from "./route";
import type { Authorizer } from "./authorizer";

let journal: ReturnType<typeof scriptedJournalFile>;
let server: ApiServer;

/** How the test stream below ended: stopped by the client going away, or not (yet). */
const drip = { chunks: 0, aborted: false, ended: false };
/** A stream that sends a line every 20 ms until its client leaves (the signal is asked for late). */
const dripRoute = route({
  method: "GET",
  path: "/test/drip",
  summary: "test stream",
  tag: "test",
  action: null,
  response: { contentType: "text/plain", description: "lines" },
  handle: ctx => ({
    contentType: "text/plain",
    stream: (async function* () {
      try {
        while (!ctx.signal.aborted && drip.chunks < 500) {
          drip.chunks++;
          yield "x\n";
          await new Promise(r => setTimeout(r, 20));
        }
        drip.aborted = ctx.signal.aborted;
      } finally {
        drip.ended = true;
      }
    })(),
  }),
});

// Its worker threads compile the TypeScript worker with tsx first, which is slow on a loaded machine.
beforeAll(async () => {
  journal = scriptedJournalFile();
  server = await startApiServer(
    testServerOptions(journal.path, {
      corsOrigins: ["https://ui.example"],
      routes: [...ROUTES, dripRoute],
    }),
  );
}, 60_000);
afterAll(async () => {
  await server?.close();
  journal?.cleanup();
});

const json = { "content-type": "application/json" };

describe("answers", () => {
  it("gives every historical route the Answer shape", async () => {
    const paths = [
      "/v1/clusters",
      "/v1/status",
      "/v1/streams",
      `/v1/coverage?at=${at(65)}`,
      "/v1/events?limit=3",
      "/v1/objects/deploy/web/history?namespace=shop",
      `/v1/objects/cm/cfg?namespace=shop&at=${at(45)}`,
      "/v1/objects/cm/cfg?namespace=shop&at=rv:11",
      "/v1/objects/cm/cfg?namespace=shop&rv=11",
      "/v1/objects/deployment/web/attribution?namespace=shop&path=spec",
      `/v1/diff?before=${at(15)}&after=${at(75)}`,
      "/v1/search?name=c",
      "/v1/snapshots",
    ];
    for (const p of paths) {
      const r = await call(server, p);
      expect({ p, status: r.status }).toEqual({ p, status: 200 });
      expect(Object.keys(r.json).sort()).toEqual(["coverage", "data", "warnings"]);
      expect(typeof r.json.coverage.complete).toBe("boolean");
    }
  });

  it("shows the gap in the answers that span it", async () => {
    const d = await call(server, `/v1/diff?before=${at(15)}&after=${at(75)}`);
    expect(d.json.coverage.complete).toBe(false);
    expect(d.json.coverage.gaps[0]).toMatchObject({ reason: "410 Gone" });
    const s = await call(server, "/v1/streams");
    const cms = s.json.data.find((x: { streamId: string }) => x.streamId.includes("configmaps"));
    expect(cms.gaps).toHaveLength(1);
    expect(cms).toHaveProperty("lagSeconds");
  });

  it("pages events with an opaque cursor bound to its filters", async () => {
    const first = await call(server, "/v1/events?limit=2&objects=false");
    expect(first.json.data.records).toHaveLength(2);
    const cursor = first.json.data.nextCursor as string;
    const next = await call(server, `/v1/events?limit=2&objects=false&cursor=${cursor}`);
    expect(next.json.data.records[0].ingestSeq).toBe(3);
    const other = await call(server, `/v1/events?limit=2&kind=cm&cursor=${cursor}`);
    expect(other.status).toBe(400);
    expect(other.json.error.fields[0].path).toBe("cursor");
    const junk = await call(server, "/v1/events?cursor=abc");
    expect(junk.status).toBe(400);
  });

  it("pages an object's history oldest first with cursors bound to the object", async () => {
    const path = "/v1/objects/deploy/web/history?namespace=shop";
    const whole = await call(server, path);
    expect(whole.json.data).toMatchObject({ nextCursor: null, previousCursor: null, total: 3 });
    const rvs = (r: { json: { data: { entries: { resourceVersion: string }[] } } }) =>
      r.json.data.entries.map(e => e.resourceVersion);
    const first = await call(server, `${path}&limit=2`);
    expect(rvs(first)).toEqual(["10", "20"]);
    expect(first.json.data.previousCursor).toBeNull();
    const next = await call(server, `${path}&limit=2&cursor=${first.json.data.nextCursor}`);
    expect(rvs(next)).toEqual(["30"]);
    expect(next.json.data.nextCursor).toBeNull();
    const back = await call(server, `${path}&limit=2&cursor=${next.json.data.previousCursor}`);
    expect(rvs(back)).toEqual(["10", "20"]);
    const other = await call(
      server,
      `/v1/objects/cm/cfg/history?namespace=shop&cursor=${first.json.data.nextCursor}`,
    );
    expect(other.status).toBe(400);
    expect(other.json.error.fields[0].path).toBe("cursor");
    for (const bad of ["cursor=abc", "limit=0", "limit=1001"]) {
      const r = await call(server, `${path}&${bad}`);
      expect({ bad, status: r.status }).toEqual({ bad, status: 400 });
    }
  });

  it("pages a search with cursors bound to its filters, every hit once", async () => {
    type Hit = { kind: string; name: string };
    const names = (r: { json: { data: { hits: Hit[] } } }) =>
      r.json.data.hits.map(h => `${h.kind}/${h.name}`);
    const whole = await call(server, "/v1/search?name=");
    expect(whole.json.data.nextCursor).toBeNull();
    expect(whole.json.data.hits.length).toBeGreaterThanOrEqual(2);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { status: number; json: { data: { hits: Hit[]; nextCursor: string | null } } } =
        await call(server, `/v1/search?name=&limit=1${cursor ? `&cursor=${cursor}` : ""}`);
      expect(page.status).toBe(200);
      expect(page.json.data.hits.length).toBeLessThanOrEqual(1);
      seen.push(...names(page));
      cursor = page.json.data.nextCursor;
      expect(seen.length).toBeLessThan(100);
    } while (cursor !== null);
    expect(seen).toEqual(names(whole));
    const first = await call(server, "/v1/search?name=&limit=1");
    const other = await call(server, `/v1/search?name=c&cursor=${first.json.data.nextCursor}`);
    expect(other.status).toBe(400);
    expect(other.json.error.fields[0].path).toBe("cursor");
    for (const bad of ["cursor=abc", "limit=0", "limit=501"]) {
      const r = await call(server, `/v1/search?name=&${bad}`);
      expect({ bad, status: r.status }).toEqual({ bad, status: 400 });
    }
  });

  it("streams an export as NDJSON with its coverage in a header", async () => {
    const r = await call(server, "/v1/export?namespace=shop");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/x-ndjson");
    const lines = r.text
      .trim()
      .split("\n")
      .map(l => JSON.parse(l) as { ingestSeq: number });
    expect(lines.length).toBeGreaterThan(3);
    expect(JSON.parse(r.headers.get("krply-coverage")!)).toMatchObject({ complete: false });
  });

  it("takes a snapshot, stores it, and lists it", async () => {
    const r = await call(server, "/v1/snapshots", {
      method: "POST",
      headers: json,
      body: JSON.stringify({ at: at(45), name: "unit" }),
    });
    expect(r.status).toBe(201);
    expect(r.json.data).toMatchObject({ name: "unit", complete: true });
    const list = await call(server, "/v1/snapshots");
    expect(list.json.data.map((s: { name: string }) => s.name)).toContain("unit");
    const objs = await call(server, `/v1/snapshots/${r.json.data.id}?namespace=shop`);
    expect(objs.status).toBe(200);
    expect(objs.json.data.objects.map((o: { name: string }) => o.name).sort()).toEqual([
      "cfg",
      "new",
      "web",
    ]);
    const dry = await call(server, "/v1/snapshots?dryRun=true", {
      method: "POST",
      headers: json,
      body: "{}",
    });
    expect(dry.status).toBe(200);
    expect(dry.json.data.id).toBeNull();
  });
});

describe("audit", () => {
  it("correlates an EventList from the webhook backend and answers who made the change", async () => {
    const created = {
      kind: "Event",
      apiVersion: "audit.k8s.io/v1",
      level: "RequestResponse",
      auditID: "webhook-1",
      stage: "ResponseComplete",
      requestURI: "/api/v1/namespaces/shop/configmaps",
      verb: "create",
      user: { username: "alice", groups: ["system:authenticated"] },
      userAgent: "kubectl/v1.37.2",
      sourceIPs: ["10.0.0.9"],
      objectRef: { resource: "configmaps", namespace: "shop", name: "new", apiVersion: "v1" },
      responseStatus: { code: 201 },
      responseObject: {
        kind: "ConfigMap",
        metadata: { name: "new", namespace: "shop", uid: "u-new", resourceVersion: "40" },
      },
      stageTimestamp: at(40),
    };
    const body = { kind: "EventList", apiVersion: "audit.k8s.io/v1", items: [created, { x: 1 }] };
    const r = await call(server, "/v1/audit/events", {
      method: "POST",
      headers: json,
      body: JSON.stringify(body),
    });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ accepted: 1, malformed: 1, counts: { matched: 1 } });
    const who = await call(server, `/v1/who?namespace=shop&since=${at(0)}&until=${at(100)}`);
    expect(who.status).toBe(200);
    const alice = who.json.data.find((g: { label: string }) => g.label === "alice");
    expect(alice.actor).toMatchObject({ source: "audit", userAgent: "kubectl/v1.37.2" });
    expect(alice.changes.map((c: { name: string }) => c.name)).toEqual(["new"]);
  });
});

describe("bad input", () => {
  it("answers 400 with one entry per bad field, unknown parameters included", async () => {
    const r = await call(server, "/v1/events?limit=5000&since=yesterday&foo=1&types=event,nope");
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe("invalid_input");
    expect(r.json.error.fields.map((f: { path: string }) => f.path).sort()).toEqual([
      "foo",
      "limit",
      "since",
      "types",
    ]);
  });

  it("rejects repeated parameters, a missing required one, and a bad at", async () => {
    expect((await call(server, "/v1/streams?cluster=a&cluster=b")).status).toBe(400);
    const d = await call(server, `/v1/diff?before=${at(1)}`);
    expect(d.json.error.fields).toEqual([
      { in: "query", path: "after", message: expect.any(String) },
    ]);
    expect((await call(server, "/v1/objects/cm/cfg?at=soon")).status).toBe(400);
    expect((await call(server, `/v1/diff?before=${at(9)}&after=${at(1)}`)).status).toBe(400);
  });

  it("answers 404, 405, 413 and 415 in the same shape", async () => {
    const cases: [string, RequestInit, number][] = [
      ["/v1/nowhere", {}, 404],
      ["/v1/objects/widget/x/history", {}, 404],
      ["/v1/streams?cluster=elsewhere", {}, 404],
      ["/v1/snapshots/nope", {}, 404],
      ["/v1/streams", { method: "DELETE" }, 405],
      [
        "/v1/snapshots",
        { method: "POST", headers: json, body: JSON.stringify({ name: "x".repeat(5000) }) },
        413,
      ],
      [
        "/v1/snapshots",
        { method: "POST", headers: { "content-type": "text/plain" }, body: "hi" },
        415,
      ],
      ["/v1/snapshots", { method: "POST", headers: json, body: "{nope" }, 400],
      ["/v1/snapshots", { method: "POST", headers: json, body: JSON.stringify({ extra: 1 }) }, 400],
      ["/v1/objects/%E0%A4%A/x/history", {}, 400],
    ];
    for (const [p, init, status] of cases) {
      const r = await call(server, p, init);
      expect({ p, status: r.status }).toEqual({ p, status });
      expect(r.json.error).toMatchObject({
        status,
        code: expect.any(String),
        message: expect.any(String),
      });
    }
  });
});

describe("the server", () => {
  it("describes every route in /openapi.json", async () => {
    const doc = (await call(server, "/openapi.json")).json;
    for (const r of ROUTES) expect(doc.paths[r.path][r.method.toLowerCase()]).toBeDefined();
    const events = doc.paths["/v1/events"].get;
    expect(events.parameters.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining(["limit", "cursor", "since", "types"]),
    );
  });

  it("serves every metric it documents", async () => {
    await call(server, "/v1/health");
    const text = (await call(server, "/metrics")).text;
    for (const name of API_METRIC_NAMES) expect(text).toContain(`${name}`);
    expect(text).toMatch(
      /krply_api_requests_total\{route="\/v1\/health",method="GET",status="200"\}/,
    );
  });

  it("stops a stream when its client goes away", async () => {
    const req = request(`${server.url}/test/drip`);
    await new Promise<void>((resolve, reject) => {
      req.on("response", res => res.once("data", () => resolve()));
      req.on("error", reject);
      req.end();
    });
    req.destroy();
    for (let i = 0; i < 100 && !drip.ended; i++) await new Promise(r => setTimeout(r, 20));
    expect(drip).toMatchObject({ ended: true, aborted: true });
    expect(drip.chunks).toBeLessThan(100);
  });

  it("sends CORS headers only to allowed origins", async () => {
    const ok = await call(server, "/v1/health", { headers: { origin: "https://ui.example" } });
    expect(ok.headers.get("access-control-allow-origin")).toBe("https://ui.example");
    const no = await call(server, "/v1/health", { headers: { origin: "https://evil.example" } });
    expect(no.headers.get("access-control-allow-origin")).toBeNull();
    const pre = await call(server, "/v1/snapshots", {
      method: "OPTIONS",
      headers: { origin: "https://ui.example", "access-control-request-method": "POST" },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-methods")).toContain("POST");
  });

  it("refuses to start without auth on an address other machines reach", async () => {
    await expect(
      startApiServer(testServerOptions(journal.path, { host: "0.0.0.0" })),
    ).rejects.toThrow(/refusing to listen on 0.0.0.0 without authentication/);
  });

  it("refuses to start on a journal that does not exist", async () => {
    await expect(startApiServer(testServerOptions(`${journal.path}.missing`))).rejects.toThrow(
      /cannot open journal/,
    );
  });

  it("asks the authorizer for each route's action and answers its refusals", async () => {
    const seen: string[] = [];
    const authorizer: Authorizer = {
      mode: "test",
      authorize: (headers, action) => {
        seen.push(`${action.resource}:${action.verb}`);
        if (!headers.authorization)
          return Promise.reject(new ApiError("unauthenticated", "no token"));
        if (action.resource === "snapshots")
          return Promise.reject(new ApiError("forbidden", "denied"));
        return Promise.resolve({ user: "reader", groups: [] });
      },
    };
    const s = await startApiServer(testServerOptions(journal.path, { authorizer }));
    try {
      expect((await call(s, "/v1/health")).status).toBe(200);
      expect((await call(s, "/v1/streams")).status).toBe(401);
      const auth = { authorization: "Bearer t" };
      expect((await call(s, "/v1/streams", { headers: auth })).status).toBe(200);
      const post = await call(s, "/v1/snapshots", {
        method: "POST",
        headers: { ...auth, ...json },
        body: "{}",
      });
      expect(post.status).toBe(403);
      expect(seen).toEqual(["journal:get", "journal:get", "snapshots:create"]);
    } finally {
      await s.close();
    }
  });
});
