import type { Readable } from "node:stream";
import type { RequestOptions } from "node:https";
import { connect as tlsConnect, type ConnectionOptions } from "node:tls";
import type { KubeConfig } from "@kubernetes/client-node";
import type { Dispatcher } from "undici";
// By path, not from undici's index, which loads all of undici (fetch, WebSocket, caches, mocks):
// about 3 MiB of heap in every recorder for code it never runs (docs/benchmarks.md, recorder).
import Agent from "undici/lib/dispatcher/agent.js";
// eslint-disable-next-line no-restricted-imports -- undici's lib/api, not src/api's front door
import requestOn from "undici/lib/api/api-request.js";
import { logger } from "../log/logger";
import { apiErrorFrom, toNetworkError } from "./errors";
import { parseJsonText } from "./json";
import { KubeConfigFile } from "./kubeconfig";

const log = logger("kube");

/**
 * Requests per HTTP/2 connection. Each watch holds one stream for minutes; past this many the pool
 * opens another connection instead of queueing, and it stays below the server's advertised
 * MAX_CONCURRENT_STREAMS (250 in kube-apiserver, Go's default), beyond which the HTTP/2 layer would
 * hold a request back without a word.
 */
export const STREAMS_PER_CONNECTION = 100;
/** HTTP/1.1 connections for writes (replay applies with bounded concurrency well below this). */
const WRITE_CONNECTIONS = 16;

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

/**
 * Loads a kubeconfig the way kubectl does: file, default chain or in-cluster, then the context.
 * client-node is not loaded here (see kubeconfig.ts); only a user whose auth it must compute loads it.
 */
export function loadKubeConfig(src: KubeConfigSource = {}): KubeConfigFile {
  // A path list in --kubeconfig is one file, as with kubectl; only $KUBECONFIG is a list.
  const kc = src.kubeconfig
    ? KubeConfigFile.fromFiles([src.kubeconfig])
    : KubeConfigFile.fromDefault();
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

/** How a request gets its auth headers: from the kubeconfig, or from client-node for a delegated user. */
type AuthSource = () => Promise<Record<string, string>>;

/**
 * An exec plugin or auth-provider runs through client-node, imported only here. client-node refuses
 * http:// servers unless TLS verification is off, though TLS is not used there (kubectl proxy, test
 * fakes), so for those servers its copy has the flag set.
 */
async function delegatedAuth(kc: KubeConfigFile): Promise<AuthSource> {
  const { KubeConfig: ClientNodeConfig } = await import("@kubernetes/client-node");
  const { stringify } = await import("yaml");
  const doc = kc.currentAsDocument() as { clusters: { cluster: Record<string, unknown> }[] };
  if (kc.getCurrentCluster()?.server.startsWith("http://"))
    doc.clusters[0].cluster["insecure-skip-tls-verify"] = true;
  const cn: KubeConfig = new ClientNodeConfig();
  cn.loadFromString(stringify(doc));
  return async () => {
    const opts: RequestOptions = {};
    await cn.applyToHTTPSOptions(opts);
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(opts.headers ?? {})) {
      if (typeof v === "string" || typeof v === "number") out[k] = String(v);
    }
    if (opts.auth) out.Authorization = `Basic ${Buffer.from(opts.auth).toString("base64")}`;
    return out;
  };
}

/**
 * An HTTP client for one cluster: auth from KubeConfig, one undici Agent reused for every request.
 * Over HTTP/2 (what kube-apiserver offers) watches share connections, STREAMS_PER_CONNECTION each,
 * as client-go does; over HTTP/1.1 each request has its own connection. Neither caps the number of
 * connections, so no watch waits for another to end.
 */
export class KubeClient {
  private closed = false;
  /** Bytes of JSON answers read so far (the listing engine frees their garbage by this count). */
  bytesRead = 0;
  /** Start times of requests still waiting for their response headers. */
  private readonly waiting = new Set<{ at: number }>();
  /** The HTTP/1.1 agent for requests that carry a body, made on the first one (see writeAgent). */
  private writes: Agent | null = null;

  private constructor(
    readonly kubeConfig: KubeConfigFile,
    readonly server: string,
    private readonly agent: Agent,
    /** Where each request's auth headers come from (tokens rotate). */
    private readonly auth: AuthSource,
    /** The protocol the server negotiated at creation. */
    readonly protocol: "h2" | "http/1.1",
    private readonly tls: ConnectionOptions,
  ) {}

  /**
   * Where a request goes. undici 7 holds back a non-idempotent request (POST, PUT, PATCH, DELETE) on an
   * HTTP/2 session while any other stream on it is open (client-h2 `busy()`; nodejs/undici#5390 and
   * #5524, fixed in 8.x), and an open watch is such a stream: the write would wait forever. Writes
   * therefore take HTTP/1.1 connections of their own; reads and watches keep sharing the h2 session.
   */
  private dispatcherFor(method: Dispatcher.HttpMethod): Agent {
    if (this.protocol !== "h2" || method === "GET" || method === "HEAD") return this.agent;
    this.writes ??= new Agent({
      connect: this.tls,
      headersTimeout: 60_000,
      bodyTimeout: 60_000,
      keepAliveTimeout: 30_000,
      connections: WRITE_CONNECTIONS,
    });
    return this.writes;
  }

  /** Creates a client; TLS material is read once, auth headers are refreshed per request. */
  static async create(kc: KubeConfigFile): Promise<KubeClient> {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error("kubeconfig has no current cluster");
    const auth: AuthSource = kc.getCurrentUser()?.delegated
      ? await delegatedAuth(kc)
      : () => Promise.resolve(kc.authHeaders());
    const tls: ConnectionOptions = kc.tls();
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
    return new KubeClient(kc, server, agent, auth, protocol, tls);
  }

  /** Requests that have waited longer than olderThanMs for their response headers (a metric). */
  waitingRequests(olderThanMs = WAITING_WARN_MS, now = Date.now()): number {
    let n = 0;
    for (const w of this.waiting) if (now - w.at >= olderThanMs) n++;
    return n;
  }

  // Exec plugins and token files rotate credentials, so headers are built for every request.
  private authHeaders(): Promise<Record<string, string>> {
    return this.auth();
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
      // The server URL may carry a path prefix (a proxy's), so origin and path come from the whole.
      const url = new URL(this.server + path);
      return await requestOn.call(this.dispatcherFor(method), {
        origin: url.origin,
        path: url.pathname + url.search,
        method,
        headers: { ...(await this.authHeaders()), ...headers },
        body,
        signal,
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
    this.bytesRead += text.length;
    if (res.statusCode < 200 || res.statusCode >= 300) {
      throw apiErrorFrom(
        res.statusCode,
        text,
        `${method} ${url}`,
        header(res.headers, "retry-after"),
      );
    }
    // A list answer can hold Secrets, and JSON.parse's message quotes the text: never keep it.
    return {
      status: res.statusCode,
      data: parseJsonText(text, `${method} ${url}: the answer`) as T,
    };
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
    await Promise.all([this.agent.close(), this.writes?.close()]);
  }
}

const shared = new Map<string, Promise<KubeClient>>();

/** One client (and so one Agent) per cluster and user within a process. */
export function clientFor(kc: KubeConfigFile): Promise<KubeClient> {
  const key = `${kc.getCurrentCluster()?.server ?? ""}|${kc.getCurrentUser()?.name ?? ""}|${kc.currentContext}`;
  let c = shared.get(key);
  if (!c) {
    c = KubeClient.create(kc);
    c.catch(() => shared.delete(key));
    shared.set(key, c);
  }
  return c;
}
