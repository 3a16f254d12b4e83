// Fuzzes every route with generated valid and invalid inputs: no answer may be a 5xx, every error
// must have the one error shape, and the server must stay up.
import fc from "fast-check";
import type { z } from "zod";
import {
  call,
  scriptedJournalFile,
  startApiServer,
  testServerOptions,
} from "../../test/support/api-fixtures";
import { at } from "../../test/support/journal-fixtures";
import { ROUTES } from "./routes";
import type { ApiServer } from "./server";

jest.setTimeout(120_000);

let journal: ReturnType<typeof scriptedJournalFile>;
let server: ApiServer;

// Its worker threads compile the TypeScript worker with tsx first, which is slow on a loaded machine.
beforeAll(async () => {
  journal = scriptedJournalFile();
  server = await startApiServer(testServerOptions(journal.path, { workers: 2 }));
}, 60_000);
afterAll(async () => {
  await server?.close();
  journal?.cleanup();
});

// Values a parameter might take: plausible ones, boundary ones, and junk.
const value = fc.oneof(
  fc.constantFrom(
    "true",
    "false",
    "0",
    "1",
    "100",
    "1000",
    "1001",
    "-1",
    "1e3",
    "",
    at(0),
    at(45),
    at(65),
    "2024-01-01",
    "1969-12-31T23:59:59Z",
    "9999-12-31T23:59:59Z",
    "275760-09-13T00:00:00Z",
    "rv:11",
    "rv:",
    "rv:999999",
    "event,gap",
    "event,,",
    "nope",
    "c1",
    "shop",
    "deploy",
    "cm",
    "Deployment",
    "web",
    "cfg",
    "app=web",
    "a=b,c!=d",
    "x".repeat(2000),
    "%",
    "%zz",
    "\u0000",
    "é",
    "🙂",
    "null",
    "{}",
    "[]",
  ),
  fc.string(),
  fc.string({ unit: "grapheme", maxLength: 40 }),
);
const segment = fc.oneof(
  fc.constantFrom(
    "deploy",
    "cm",
    "configmap",
    "web",
    "cfg",
    "new",
    "late",
    "x".repeat(300),
    "a.b",
    "-",
  ),
  fc.string({ minLength: 1, maxLength: 30 }),
);
const body = fc.oneof(
  fc.jsonValue(),
  fc.record(
    {
      cluster: fc.oneof(value, fc.integer()),
      at: fc.oneof(value, fc.integer(), fc.constant(null)),
      name: fc.oneof(value, fc.boolean()),
      objects: fc.oneof(fc.boolean(), value),
      record: fc.constant(false),
    },
    { requiredKeys: [] },
  ),
);

const keysOf = (s: z.ZodType | undefined): string[] =>
  s && "shape" in s ? Object.keys((s as z.ZodObject).shape) : [];

const errorShape = {
  error: {
    status: expect.any(Number),
    code: expect.any(String),
    message: expect.any(String),
    fields: expect.any(Array),
  },
};

it.each(ROUTES.map(r => [`${r.method} ${r.path}`, r] as const))(
  "%s never answers 5xx",
  async (_name, route) => {
    const known = keysOf(route.query);
    // Mostly the route's own parameters, so generated values reach the queries; sometimes strangers.
    const key = fc.oneof(
      { weight: 4, arbitrary: known.length > 0 ? fc.constantFrom(...known) : fc.constant("foo") },
      { weight: 1, arbitrary: fc.string({ maxLength: 8 }) },
    );
    const query = fc.dictionary(key, value, { maxKeys: 5 });
    const params = fc.array(segment, { minLength: 3, maxLength: 3 });
    await fc.assert(
      fc.asyncProperty(query, params, body, fc.boolean(), async (q, segs, b, encode) => {
        let i = 0;
        const path = route.path.replace(/\{\w+\}/g, () =>
          encode ? encodeURIComponent(segs[i++]) : segs[i++].replace(/[/?#]/g, ""),
        );
        const qs = new URLSearchParams(q as Record<string, string>).toString();
        // A POST of a snapshot never stores one here: dryRun is forced.
        const init: RequestInit =
          route.method === "POST"
            ? {
                method: "POST",
                headers: { "content-type": "application/json" },
                body: JSON.stringify(b),
              }
            : {};
        const url = `${path}?${qs}${route.path === "/v1/snapshots" && route.method === "POST" ? "&dryRun=true" : ""}`;
        const r = await call(server, url, init);
        if (r.status >= 500)
          throw new Error(`${route.method} ${url} -> ${r.status} ${r.text.slice(0, 300)}`);
        if (r.status >= 400) expect(r.json).toEqual(errorShape);
      }),
      { numRuns: 40 },
    );
    expect((await call(server, "/v1/health")).status).toBe(200);
  },
);
