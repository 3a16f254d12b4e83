import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { z } from "zod";
import { nativeBindingInUse, openJournalView, type JournalView } from "../journal";
import { logger, type Logger } from "../log/logger";
import { assertBindAllowed, type Authorizer, type Principal } from "./authorizer";
import { ApiError, fieldErrors, invalidInput, toApiError, type FieldError } from "./errors";
import { PageCache } from "./event-pages";
import { apiMetrics, type ApiMetrics } from "./metrics";
import { BACKGROUND_YOUNG_GENERATION_MB, QueryPool, YOUNG_GENERATION_MB } from "./pool";
import { AnswerCache, cachedHistory, type MarkedAnswer } from "./answer-cache";
import { KeptBytes } from "./kept-bytes";
import { runQuery, type QueryName, type RefInput } from "./queries";
import { openApiDocument } from "./openapi";
import { JsonText, type AppInfo, type QueryRunner, type Reply, type Route } from "./route";
import { DEFAULT_UI_DIR, uiFiles } from "./static-ui";

export interface ApiServerOptions {
  journalPath: string;
  host: string;
  /** 0 picks a free port (tests). */
  port: number;
  authorizer: Authorizer;
  /** Origins allowed to call from a browser; empty turns CORS off. */
  corsOrigins: readonly string[];
  workers: number;
  queryTimeoutMs: number;
  maxQueue: number;
  maxBodyBytes: number;
  busyTimeoutMs: number;
  /** How long shutdown waits for in-flight requests before closing their connections. */
  shutdownGraceMs: number;
  routes: readonly Route[];
  /** Queries run in the worker pool; the rest run on the main thread's view. */
  offload: ReadonlySet<QueryName>;
  /**
   * Of those, the ones that run on the single background worker (low CPU priority, the only
   * writer), so a snapshot never holds up a history page. Default: none.
   */
  background?: ReadonlySet<QueryName>;
  /** Mapped bytes and page cache of each view (the main thread's and each worker's). */
  view?: { mmapBytes: number; pageCacheKiB: number };
  /** The background lane's page cache, when it differs from view's. */
  backgroundPageCacheKiB?: number;
  /**
   * Bytes of answers kept for questions asked again, one budget for history pages (answer-cache.ts)
   * and full events pages (event-pages.ts); 0 or absent: none kept.
   */
  answerCacheBytes?: number;
  workerScript?: string;
  log?: Logger;
  /** The built web UI (web/dist) served at / and /ui/; default the repo's web/dist, null turns it off. */
  uiDir?: string | null;
}

export interface ApiServer {
  url: string;
  address: AddressInfo;
  metrics: ApiMetrics;
  /** Stops accepting, lets in-flight requests finish, then closes the workers and their views. */
  close(): Promise<void>;
  readonly closing: boolean;
}

interface CompiledRoute {
  route: Route;
  pattern: RegExp;
  names: string[];
}

function compile(route: Route): CompiledRoute {
  const names: string[] = [];
  const source = route.path
    .replace(/[.*+?^$()|[\]\\]/g, "\\$&")
    .replace(/\{(\w+)\}/g, (_m, n: string) => {
      names.push(n);
      return "([^/]+)";
    });
  return { route, pattern: new RegExp(`^${source}$`), names };
}

const JSON_TYPE = "application/json; charset=utf-8";

/** The query string as an object of strings; a repeated key is a field error. */
function queryObject(params: URLSearchParams): {
  value: Record<string, string>;
  errors: FieldError[];
} {
  const value: Record<string, string> = {};
  const errors: FieldError[] = [];
  for (const [k, v] of params) {
    if (k in value) errors.push({ in: "query", path: k, message: "given more than once" });
    value[k] = v;
  }
  return { value, errors };
}

async function readBody(req: IncomingMessage, max: number): Promise<string> {
  const declared = Number(req.headers["content-length"] ?? "0");
  if (declared > max)
    throw new ApiError("payload_too_large", `the body is larger than ${max} bytes`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > max) throw new ApiError("payload_too_large", `the body is larger than ${max} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** The schema of a part a route does not declare: made once, as zod compiles each schema on first use. */
const NOTHING = z.strictObject({});

function parsePart(
  where: "path" | "query" | "body",
  schema: z.ZodType | undefined,
  input: unknown,
  errors: FieldError[],
): unknown {
  const s = schema ?? NOTHING;
  const r = s.safeParse(input);
  if (r.success) return r.data;
  errors.push(...fieldErrors(where, r.error));
  return undefined;
}

/** An authorizer's refusal as an ApiError: it may throw its own error type with a status and code. */
function authFailure(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const e = err as { status?: unknown; code?: unknown; message?: unknown };
  const codes = { 401: "unauthenticated", 403: "forbidden", 503: "unavailable" } as const;
  const code = codes[e?.status as keyof typeof codes];
  if (code && typeof e.message === "string")
    return new ApiError(code, e.message, [], { cause: err });
  return new ApiError("unavailable", "cannot check authorization right now", [], { cause: err });
}

/**
 * A request's AbortSignal, made when something asks for it (a stream): most requests never do, and
 * each AbortController costs an EventTarget on the event loop's busiest path.
 */
class LazyAbort {
  private controller: AbortController | null = null;
  private gone = false;

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.gone) this.controller.abort();
    }
    return this.controller.signal;
  }

  abort(): void {
    this.gone = true;
    this.controller?.abort();
  }
}

/** Starts the query sidecar's HTTP server. */
export async function startApiServer(opts: ApiServerOptions): Promise<ApiServer> {
  assertBindAllowed(opts.host, opts.authorizer);
  const log = opts.log ?? logger("api");
  const busy = { count: () => 0 };
  const metrics = apiMetrics(() => busy.count());
  const background = opts.background ?? new Set<QueryName>();
  const lane = (size: number, kind: "interactive" | "background") =>
    new QueryPool({
      size,
      timeoutMs: opts.queryTimeoutMs,
      maxQueue: opts.maxQueue,
      data: {
        journalPath: opts.journalPath,
        busyTimeoutMs: opts.busyTimeoutMs,
        // A worker thread has module state of its own: it is told which addon this process loads.
        nativeBinding: nativeBindingInUse(),
        lane: kind,
        writes: kind === "background" || background.size === 0,
        ...opts.view,
        ...(kind === "background" && opts.backgroundPageCacheKiB !== undefined
          ? { pageCacheKiB: opts.backgroundPageCacheKiB }
          : {}),
      },
      log,
      observer: metrics.pool,
      script: opts.workerScript,
      // The background lane collects after every query (worker.ts), so its garbage never needs room.
      resourceLimits: {
        maxYoungGenerationSizeMb:
          kind === "background" ? BACKGROUND_YOUNG_GENERATION_MB : YOUNG_GENERATION_MB,
      },
    });
  const workers = lane(opts.workers, "interactive");
  // Only when some query goes there: it is one more thread, view and (on a snapshot) writer.
  const heavy = background.size > 0 ? lane(1, "background") : null;
  const pools = heavy ? [workers, heavy] : [workers];
  busy.count = () => pools.reduce((n, p) => n + p.busy, 0);
  const closePools = () => Promise.all(pools.map(p => p.close()));
  let view = null as JournalView | null;
  const mainView = (): JournalView => {
    view ??= openJournalView(opts.journalPath, { busyTimeoutMs: opts.busyTimeoutMs, ...opts.view });
    return view;
  };
  try {
    mainView();
    await Promise.all(pools.map(p => p.ready()));
  } catch (err) {
    await closePools();
    view?.close();
    throw new Error(`cannot open journal ${opts.journalPath}`, { cause: err });
  }
  const ctx = {
    journalPath: opts.journalPath,
    busyTimeoutMs: opts.busyTimeoutMs,
    now: () => Date.now(),
  };
  /** The pool a query runs in; null: the main thread. */
  const poolOf = (name: QueryName): QueryPool | null =>
    heavy && background.has(name) ? heavy : opts.offload.has(name) ? workers : null;
  const onMain = (name: QueryName, input: unknown): Promise<unknown> => {
    try {
      return Promise.resolve(runQuery(mainView(), name, input as never, ctx));
    } catch (err) {
      return Promise.reject(err as Error);
    }
  };
  const kept = opts.answerCacheBytes ? new KeptBytes(opts.answerCacheBytes) : null;
  const cache = kept && new AnswerCache(kept);
  const journalState = () => mainView().changeMark();
  const markNow = (ref: RefInput, streams: string[]) =>
    runQuery(mainView(), "historyMark", { ref, streams }, ctx);
  const queries: QueryRunner = {
    run: (name, input) => (poolOf(name)?.run(name, input) ?? onMain(name, input)) as never,
    answer: async (name, input) => {
      const pool = poolOf(name);
      if (!pool) return (await onMain(name, input)) as never;
      if (name === "history" && cache) {
        const make = async () =>
          (await pool.run("historyMarked", input, opts.queryTimeoutMs)) as MarkedAnswer;
        const seen = (result: string) => {
          metrics.answerCache.inc({ result });
          metrics.answerCacheBytes.set(cache.budget.bytes);
        };
        return new JsonText([
          await cachedHistory(cache, input as RefInput, journalState, markNow, make, seen),
        ]);
      }
      const json = (await pool.run(name, input, opts.queryTimeoutMs, true)) as Uint8Array;
      // Structured clone hands the bytes over as a plain Uint8Array; the Buffer shares them.
      return new JsonText([Buffer.from(json.buffer, json.byteOffset, json.byteLength)]);
    },
  };

  const compiled = opts.routes.map(compile);
  let doc: unknown = null;
  const app: AppInfo = {
    journalPath: opts.journalPath,
    notReady: () => {
      const why: string[] = [];
      if (closing) why.push("shutting down");
      if (!view) why.push("journal view is not open");
      return why;
    },
    metricsText: async () => ({
      contentType: metrics.registry.contentType,
      text: await metrics.registry.metrics(),
    }),
    openapi: () => (doc ??= openApiDocument(opts.routes)),
    eventPages:
      kept &&
      new PageCache(kept, result => {
        metrics.eventsCache.inc({ result });
        metrics.answerCacheBytes.set(kept.bytes);
      }),
  };
  const cors = new Set(opts.corsOrigins);
  const ui = opts.uiDir === null ? null : uiFiles(opts.uiDir ?? DEFAULT_UI_DIR);
  let closing = false;
  let inFlight = 0;

  function match(path: string): { c: CompiledRoute; params: Record<string, string> }[] {
    const out: { c: CompiledRoute; params: Record<string, string> }[] = [];
    for (const c of compiled) {
      const m = c.pattern.exec(path);
      if (!m) continue;
      const params: Record<string, string> = {};
      c.names.forEach((n, i) => {
        try {
          params[n] = decodeURIComponent(m[i + 1]);
        } catch {
          throw new ApiError("invalid_input", "malformed path", [
            { in: "path", path: n, message: "is not valid percent-encoding" },
          ]);
        }
      });
      out.push({ c, params });
    }
    return out;
  }

  function sendJson(
    res: ServerResponse,
    status: number,
    body: unknown,
    headers: Record<string, string> = {},
  ) {
    const text = body instanceof JsonText ? body.text : JSON.stringify(body);
    const parts = typeof text === "string" ? [text] : text;
    const length = parts.reduce((n, p) => n + Buffer.byteLength(p), 0);
    res.writeHead(status, {
      ...headers,
      "content-type": JSON_TYPE,
      "content-length": String(length),
      ...(closing ? { connection: "close" } : {}),
    });
    // Corked, the pieces leave in one write; end() uncorks.
    if (parts.length > 1) res.cork();
    for (const p of parts.slice(0, -1)) res.write(p);
    res.end(parts[parts.length - 1]);
  }

  function sendError(res: ServerResponse, err: ApiError) {
    if (res.headersSent) {
      // A stream already started: the error becomes its last line and the stream ends.
      res.end(`${JSON.stringify(err.body())}\n`);
      return;
    }
    sendJson(res, err.status, err.body());
  }

  async function send(res: ServerResponse, reply: Reply, abort: LazyAbort) {
    if ("json" in reply) {
      sendJson(res, reply.status ?? 200, reply.json, reply.headers);
      return;
    }
    const signal = abort.signal;
    res.writeHead(reply.status ?? 200, {
      ...reply.headers,
      "content-type": reply.contentType,
      ...(closing ? { connection: "close" } : {}),
    });
    try {
      for await (const chunk of reply.stream) {
        if (signal.aborted) break;
        if (!res.write(chunk)) await once(res, "drain", { signal });
      }
    } catch (err) {
      if (signal.aborted) return;
      throw err;
    }
    res.end();
  }

  function applyCors(req: IncomingMessage, res: ServerResponse): boolean {
    const origin = req.headers.origin;
    if (typeof origin !== "string" || !cors.has(origin)) return false;
    res.setHeader("access-control-allow-origin", origin);
    res.setHeader("vary", "Origin");
    return true;
  }

  async function handle(
    req: IncomingMessage,
    res: ServerResponse,
    abort: LazyAbort,
  ): Promise<string> {
    const allowed = applyCors(req, res);
    let url: URL;
    try {
      url = new URL(req.url ?? "/", "http://sidecar");
    } catch {
      throw new ApiError("invalid_input", "malformed request target");
    }
    const method = req.method ?? "GET";
    if (ui && (await ui.serve(url.pathname, method, res))) return "/ui";
    const found = match(url.pathname);
    if (found.length === 0) throw new ApiError("not_found", `no route ${url.pathname}`);
    if (method === "OPTIONS" && allowed) {
      res.writeHead(204, {
        "access-control-allow-methods": [...new Set(found.map(f => f.c.route.method))].join(", "),
        "access-control-allow-headers": "authorization, content-type",
        "access-control-max-age": "600",
      });
      res.end();
      return found[0].c.route.path;
    }
    const hit = found.find(
      f => f.c.route.method === method || (method === "HEAD" && f.c.route.method === "GET"),
    );
    if (!hit) {
      res.setHeader("allow", [...new Set(found.map(f => f.c.route.method))].join(", "));
      throw new ApiError("method_not_allowed", `${method} is not allowed on ${url.pathname}`);
    }
    const route = hit.c.route;
    let principal: Principal = { user: "anonymous", groups: [] };
    if (route.action) {
      try {
        principal = await opts.authorizer.authorize(req.headers, route.action);
      } catch (err) {
        throw authFailure(err);
      }
    }
    const errors: FieldError[] = [];
    const q = queryObject(url.searchParams);
    errors.push(...q.errors);
    const params = parsePart("path", route.params, hit.params, errors);
    const query = parsePart("query", route.query, q.value, errors);
    let body: unknown = undefined;
    if (route.body) {
      const type = String(req.headers["content-type"] ?? "");
      const raw = await readBody(req, opts.maxBodyBytes);
      let json: unknown = {};
      if (raw.trim() !== "") {
        if (!/^application\/json\b/i.test(type))
          throw new ApiError("unsupported_media_type", "the body must be application/json");
        try {
          json = JSON.parse(raw);
        } catch {
          errors.push({ in: "body", path: "", message: "is not valid JSON" });
        }
      }
      if (errors.length === 0 || json !== undefined)
        body = parsePart("body", route.body, json, errors);
    }
    if (errors.length > 0) throw invalidInput(errors);
    const reply = await route.handle({
      params,
      query,
      body,
      principal,
      queries,
      req,
      get signal() {
        return abort.signal;
      },
      app,
    });
    await send(res, reply, abort);
    return route.path;
  }

  const server: Server = createServer((req, res) => {
    inFlight++;
    const started = process.hrtime.bigint();
    const abort = new LazyAbort();
    res.on("close", () => {
      if (!res.writableFinished) abort.abort();
    });
    let routeLabel = "unmatched";
    res.on("finish", () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      metrics.requests.inc({
        route: routeLabel,
        method: req.method ?? "",
        status: String(res.statusCode),
      });
      metrics.duration.observe({ route: routeLabel, method: req.method ?? "" }, seconds);
    });
    res.on("close", () => {
      inFlight--;
    });
    handle(req, res, abort)
      .then(label => {
        routeLabel = label;
      })
      .catch((err: unknown) => {
        const e = toApiError(err);
        if (e.status >= 500 && e.code !== "timeout" && e.code !== "unavailable")
          log.error({ err, url: req.url }, "request failed");
        const found = (() => {
          try {
            return match(new URL(req.url ?? "/", "http://sidecar").pathname);
          } catch {
            return [];
          }
        })();
        routeLabel = found[0]?.c.route.path ?? "unmatched";
        if (!res.writableEnded) sendError(res, e);
      });
  });
  server.requestTimeout = Math.max(30_000, opts.queryTimeoutMs * 2);
  server.on("clientError", (_err, socket) => {
    if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n");
  });

  server.listen(opts.port, opts.host);
  try {
    await once(server, "listening");
  } catch (err) {
    await closePools();
    view?.close();
    throw new Error(`cannot listen on ${opts.host}:${opts.port}`, { cause: err });
  }
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  log.info(
    { address: `${host}:${address.port}`, auth: opts.authorizer.mode, workers: opts.workers },
    "query sidecar listening",
  );

  let closed: Promise<void> | null = null;
  return {
    url: `http://${host}:${address.port}`,
    address,
    metrics,
    get closing() {
      return closing;
    },
    close() {
      closed ??= (async () => {
        closing = true;
        const stopped = new Promise<void>(resolve => server.close(() => resolve()));
        server.closeIdleConnections();
        const deadline = Date.now() + opts.shutdownGraceMs;
        while (inFlight > 0 && Date.now() < deadline) await new Promise(r => setTimeout(r, 10));
        server.closeAllConnections();
        await stopped;
        await closePools();
        view?.close();
        view = null;
        log.info("query sidecar stopped");
      })();
      return closed;
    },
  };
}
