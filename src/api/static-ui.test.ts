import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildWeb } from "../../web/build";
import {
  call,
  scriptedJournalFile,
  startApiServer,
  testServerOptions,
} from "../../test/support/api-fixtures";
import type { ApiServer } from "./server";
import { uiFileOf, UI_SECURITY_HEADERS } from "./static-ui";

describe("uiFileOf", () => {
  it("maps the UI's paths to flat files and nothing else", () => {
    expect(uiFileOf("/")).toBe("index.html");
    expect(uiFileOf("/ui/")).toBe("index.html");
    expect(uiFileOf("/ui")).toBe("index.html");
    expect(uiFileOf("/ui/app.js")).toBe("app.js");
    expect(uiFileOf("/ui/app.css")).toBe("app.css");
    expect(uiFileOf("/ui/app.js.map")).toBe("app.js.map");
    for (const p of [
      "/ui/../package.json",
      "/ui/..",
      "/ui/.env",
      "/ui/a/b.js",
      "/ui/%2e%2e/x.js",
      "/ui/app.ts",
      "/ui/noext",
      "/v1/streams",
      "/index.htm",
    ])
      expect({ p, f: uiFileOf(p) }).toEqual({ p, f: null });
  });
});

describe("the sidecar serves the built UI", () => {
  let journal: ReturnType<typeof scriptedJournalFile>;
  let dir: string;
  let server: ApiServer;
  let bare: ApiServer;
  let unbuilt: ApiServer;

  beforeAll(async () => {
    journal = scriptedJournalFile();
    dir = mkdtempSync(join(tmpdir(), "krply-web-"));
    await buildWeb({ outDir: join(dir, "dist") });
    server = await startApiServer(testServerOptions(journal.path, { uiDir: join(dir, "dist") }));
    bare = await startApiServer(testServerOptions(journal.path, { uiDir: null }));
    unbuilt = await startApiServer(testServerOptions(journal.path, { uiDir: join(dir, "none") }));
  }, 60_000);
  afterAll(async () => {
    await Promise.all([server?.close(), bare?.close(), unbuilt?.close()]);
    journal?.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it("answers index.html at / with a strict CSP, nosniff and no framing", async () => {
    const r = await call(server, "/");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(r.text).toContain('<script type="module" src="/ui/app.js"></script>');
    const csp = r.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain("unsafe-inline");
    expect(csp).not.toContain("unsafe-eval");
    expect(r.headers.get("x-content-type-options")).toBe("nosniff");
    expect(r.headers.get("x-frame-options")).toBe("DENY");
    for (const [k, v] of Object.entries(UI_SECURITY_HEADERS)) expect(r.headers.get(k)).toBe(v);
    // The page itself holds no inline script: every script is a file of the bundle.
    expect(r.text).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
  });

  it("serves the bundle with its content types, HEAD without a body", async () => {
    const js = await call(server, "/ui/app.js");
    expect(js.status).toBe(200);
    expect(js.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(js.text.length).toBeGreaterThan(1000);
    const css = await call(server, "/ui/app.css");
    expect(css.headers.get("content-type")).toBe("text/css; charset=utf-8");
    const head = await call(server, "/ui/app.js", { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.text).toBe("");
    expect(Number(head.headers.get("content-length"))).toBe(Buffer.byteLength(js.text));
  });

  it("answers a missing file or a path outside the UI in the API's error shape", async () => {
    const missing = await call(server, "/ui/nothing.js");
    expect(missing.status).toBe(404);
    expect(missing.json.error.code).toBe("not_found");
    const climb = await call(server, "/ui/..%2Fpackage.json");
    expect(climb.status).toBe(404);
    expect(climb.text).not.toContain('"name": "krply"');
    const post = await call(server, "/", { method: "POST" });
    expect(post.status).toBe(404);
  });

  it("leaves the API as it was", async () => {
    const r = await call(server, "/v1/streams");
    expect(r.status).toBe(200);
    expect(r.json.data).toHaveLength(2);
  });

  it("says the UI is not built, and serves nothing when turned off", async () => {
    const r = await call(unbuilt, "/");
    expect(r.status).toBe(404);
    expect(r.json.error.message).toBe("the web UI is not built (npm run build:web)");
    const off = await call(bare, "/");
    expect(off.status).toBe(404);
    expect(off.json.error.message).toBe("no route /");
  });
});
