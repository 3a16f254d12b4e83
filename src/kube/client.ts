import type { Readable } from "node:stream";
import type { RequestOptions } from "node:https";
import { connect as tlsConnect, type ConnectionOptions } from "node:tls";
import { KubeConfig } from "@kubernetes/client-node";
import { Agent, request, type Dispatcher } from "undici";
import { logger } from "../log/logger";
import { apiErrorFrom, toNetworkError } from "./errors";
import { parseJsonText } from "./json";

const log = logger("kube");

/**
 * Requests per HTTP/2 connection. Each watch holds one stream for minutes; past this many the pool
 * opens another connection instead of queueing, and it stays below the server's advertised
 * MAX_CONCURRENT_STREAMS (250 in kube-apiserver, Go's default), beyond which the HTTP/2 layer would
 * hold a request back without a word.
 */
export const STREAMS_PER_CONNECTION = 100;

/** A request without response headers this long is logged, and again each period after. */
export const WAITING_WARN_MS = 10_000;

/** The protocol the server picks by ALPN: "h2" lets many watches share one connection. */
async function negotiatedProtocol(
  server: string,
  tls: ConnectionOptions,
  timeoutMs = 10_000,
): Promise<"h2" | "http/1.1"> {
  const url = new URL(server);
  if (url.protocol !== "https:") return "http/1.1";
  return new Promise(resolve => {
    const socket = tlsConnect({
      ...tls,
      host: url.hostname,
      port: Number(url.port || 443),
      servername: tls.servername ?? (/^[\d.]+$|:/.test(url.hostname) ? undefined : url.hostname),
      ALPNProtocols: ["h2", "http/1.1"],
    });
    const done = (p: "h2" | "http/1.1") => {
      clearTimeout(timer);
      socket.destroy();
      resolve(p);
    };
    // An unreachable server is reported by the first real request, with its own error handling.
    const timer = setTimeout(() => done("http/1.1"), timeoutMs);
    socket.once("secureConnect", () => done(socket.alpnProtocol === "h2" ? "h2" : "http/1.1"));
    socket.once("error", () => done("http/1.1"));
  });
}

export interface KubeConfigSource {
  /** Path to a kubeconfig file; default: $KUBECONFIG, ~/.kube/config, then in-cluster. */
  kubeconfig?: string;
  context?: string;
}

/** Loads a KubeConfig the way kubectl does: file, default chain or in-cluster, then the context. */
export function loadKubeConfig(src: KubeConfigSource = {}): KubeConfig {
  const kc = new KubeConfig();
  if (src.kubeconfig) kc.loadFromFile(src.kubeconfig);
  else kc.loadFromDefault(); // falls back to the service account when KUBERNETES_SERVICE_HOST is set
  if (src.context) {
    if (!kc.getContexts().some(c => c.name === src.context)) {
      throw new Error(`context "${src.context}" not found in kubeconfig`);
    }
    kc.setCurrentContext(src.context);
  }
  if (!kc.getCurrentCluster()) throw new Error("kubeconfig has no current cluster");
  return kc;
}

export type Query = Record<string, string | number | boolean | undefined>;

export interface JsonRequest {
  method?: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  query?: Query;
  body?: unknown;
  contentType?: string;
  signal?: AbortSignal;
}

export interface StreamResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Readable;
}

/** Builds a path with a query string, skipping undefined values. */
export function withQuery(path: string, query: Query = {}): string {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) qs.set(k, String(v));
  const s = qs.toString();
  return s ? `${path}?${s}` : path;
}

function header(
  h: Record<string, string | string[] | undefined>,
  name: string,
): string | undefined {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * client-node refuses http:// servers unless TLS verification is off, though TLS is not used there
 * (kubectl proxy, test fakes). For those servers only, auth is computed from a copy with the flag set.
 */
function authConfig(kc: KubeConfig): KubeConfig {
  const current = kc.getCurrentCluster();
  if (!current || !current.server.startsWith("http://")) return kc;
  const copy = new KubeConfig();
  copy.loadFromOptions({
    clusters: kc.clusters.map(c => (c.name === current.name ? { ...c, skipTLSVerify: true } : c)),
    users: kc.users,
    contexts: kc.contexts,
    currentContext: kc.currentContext,
  });
  return copy;
}

/**
 * An HTTP client for one cluster: auth from KubeConfig, one undici Agent reused for every request.
 * Over HTTP/2 (what kube-apiserver offers) watches share connections, STREAMS_PER_CONNECTION each,
 * as client-go does; over HTTP/1.1 each request has its own connection. Neither caps the number of
 * connections, so no watch waits for another to end.
 */
export class KubeClient {
  private closed = false;
  /** Start times of requests still waiting for their response headers. */
  private readonly waiting = new Set<{ at: number }>();

  private constructor(
    readonly kubeConfig: KubeConfig,
    readonly server: string,
    private readonly agent: Agent,
    /** The config auth headers come from (see authConfig). */
    private readonly authKc: KubeConfig,
    /** The protocol the server negotiated at creation. */
    readonly protocol: "h2" | "http/1.1",
  ) {}

  /** Creates a client; TLS material is read once, auth headers are refreshed per request. */
  static async create(kc: KubeConfig): Promise<KubeClient> {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error("kubeconfig has no current cluster");
    const authKc = authConfig(kc);
    const opts: RequestOptions = {};
    await authKc.applyToHTTPSOptions(opts);
    const tls = {
      ca: opts.ca as string | Buffer | undefined,
      cert: opts.cert as string | Buffer | undefined,
      key: opts.key as string | Buffer | undefined,
      rejectUnauthorized: cluster.skipTLSVerify ? false : opts.rejectUnauthorized,
      servername: opts.servername,
    };
    const server = cluster.server.replace(/\/+$/, "");
    const protocol = await negotiatedProtocol(server, tls);
    const agent = new Agent({
      connect: tls,
      // Watches are long-lived; our own silence timer decides when one is dead.
      bodyTimeout: 0,
      headersTimeout: 60_000,
      keepAliveTimeout: 30_000,
      // No cap: a cap on connections is a cap on watches, and the one past it would wait unseen.
      connections: null,
      ...(protocol === "h2"
        ? { allowH2: true, pipelining: STREAMS_PER_CONNECTION, maxConcurrentStreams: 250 }
        : {}),
    });
    log.debug({ server, protocol }, "kube client created");
    return new KubeClient(kc, server, agent, authKc, protocol);
  }

  /** Requests that have waited longer than olderThanMs for their response headers (a metric). */
  waitingRequests(olderThanMs = WAITING_WARN_MS, now = Date.now()): number {
    let n = 0;
    for (const w of this.waiting) if (now - w.at >= olderThanMs) n++;
    return n;
  }

  // Exec plugins and token files rotate credentials, so headers are built for every request.
  private async authHeaders(): Promise<Record<string, string>> {
    const opts: RequestOptions = {};
    await this.authKc.applyToHTTPSOptions(opts);
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(opts.headers ?? {})) {
      if (typeof v === "string" || typeof v === "number") out[k] = String(v);
    }
    if (opts.auth) out.Authorization = `Basic ${Buffer.from(opts.auth).toString("base64")}`;
    return out;
  }

  private async send(
    path: string,
    method: Dispatcher.HttpMethod,
    headers: Record<string, string>,
    body: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<Dispatcher.ResponseData> {
    if (this.closed) throw new Error(`client for ${this.server} is closed`);
    const what = `${method} ${path}`;
    // A request that gets no answer is never silent: it is logged while it waits, and counted.
    const entry = { at: Date.now() };
    this.waiting.add(entry);
    const timer = setInterval(() => {
      log.warn(
        { request: what, waitedMs: Date.now() - entry.at, protocol: this.protocol },
        "request still waiting for the server's answer (a connection or the server is slow)",
      );
    }, WAITING_WARN_MS);
    timer.unref();
    try {
      return await request(this.server + path, {
        method,
        headers: { ...(await this.authHeaders()), ...headers },
        body,
        signal,
        dispatcher: this.agent,
      });
    } catch (err) {
      throw toNetworkError(err, what);
    } finally {
      clearInterval(timer);
      this.waiting.delete(entry);
    }
  }

  /** Sends a request and parses the JSON answer; throws ApiError on non-2xx, NetworkError otherwise. */
  async json<T = unknown>(path: string, req: JsonRequest = {}): Promise<T> {
    return (await this.jsonWithStatus<T>(path, req)).data;
  }

  /** Like json, with the HTTP status too (server-side apply answers 201 when it creates). */
  async jsonWithStatus<T = unknown>(
    path: string,
    req: JsonRequest = {},
  ): Promise<{ status: number; data: T }> {
    const method = req.method ?? "GET";
    const url = withQuery(path, req.query);
    const headers: Record<string, string> = { accept: "application/json" };
    let body: string | undefined;
    if (req.body !== undefined) {
      headers["content-type"] = req.contentType ?? "application/json";
      body = typeof req.body === "string" ? req.body : JSON.stringify(req.body);
    }
    const res = await this.send(url, method, headers, body, req.signal);
    let text: string;
    try {
      text = await res.body.text();
    } catch (err) {
      throw toNetworkError(err, `${method} ${url}: reading body`);
    }
    if (res.statusCode < 200 || res.statusCode >= 300) {
      throw apiErrorFrom(
        res.statusCode,
        text,
        `${method} ${url}`,
        header(res.headers, "retry-after"),
      );
    }
    // A list answer can hold Secrets, and JSON.parse's message quotes the text: never keep it.
    return { status: res.statusCode, data: parseJsonText(text, `${method} ${url}: the answer`) as T };
  }

  /** Opens a streaming GET (a watch); the caller reads body and must destroy it when done. */
  async stream(path: string, query: Query, signal?: AbortSignal): Promise<StreamResponse> {
    const url = withQuery(path, query);
    const res = await this.send(url, "GET", { accept: "application/json" }, undefined, signal);
    if (res.statusCode < 200 || res.statusCode >= 300) {
      const text = await res.body.text().catch((err: unknown) => `(body unreadable: ${err})`);
      throw apiErrorFrom(res.statusCode, text, `GET ${url}`, header(res.headers, "retry-after"));
    }
    return { status: res.statusCode, headers: res.headers, body: res.body };
  }

  /** Closes the agent and every pooled connection. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.agent.close();
  }
}

const shared = new Map<string, Promise<KubeClient>>();

/** One client (and so one Agent) per cluster and user within a process. */
export function clientFor(kc: KubeConfig): Promise<KubeClient> {
  const key = `${kc.getCurrentCluster()?.server ?? ""}|${kc.getCurrentUser()?.name ?? ""}|${kc.currentContext}`;
  let c = shared.get(key);
  if (!c) {
    c = KubeClient.create(kc);
    c.catch(() => shared.delete(key));
    shared.set(key, c);
  }
  return c;
}
