import type { Readable } from "node:stream";
import type { RequestOptions } from "node:https";
import { KubeConfig } from "@kubernetes/client-node";
import { Agent, request, type Dispatcher } from "undici";
import { apiErrorFrom, toNetworkError } from "./errors";

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

/** An HTTP client for one cluster: auth from KubeConfig, one undici Agent reused for every request. */
export class KubeClient {
  private closed = false;

  private constructor(
    readonly kubeConfig: KubeConfig,
    readonly server: string,
    private readonly agent: Agent,
    /** The config auth headers come from (see authConfig). */
    private readonly authKc: KubeConfig,
  ) {}

  /** Creates a client; TLS material is read once, auth headers are refreshed per request. */
  static async create(kc: KubeConfig): Promise<KubeClient> {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error("kubeconfig has no current cluster");
    const authKc = authConfig(kc);
    const opts: RequestOptions = {};
    await authKc.applyToHTTPSOptions(opts);
    const agent = new Agent({
      connect: {
        ca: opts.ca as string | Buffer | undefined,
        cert: opts.cert as string | Buffer | undefined,
        key: opts.key as string | Buffer | undefined,
        rejectUnauthorized: cluster.skipTLSVerify ? false : opts.rejectUnauthorized,
        servername: opts.servername,
      },
      // Watches are long-lived; our own silence timer decides when one is dead.
      bodyTimeout: 0,
      headersTimeout: 60_000,
      keepAliveTimeout: 30_000,
      connections: 64,
    });
    return new KubeClient(kc, cluster.server.replace(/\/+$/, ""), agent, authKc);
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
    }
  }

  /** Sends a request and parses the JSON answer; throws ApiError on non-2xx, NetworkError otherwise. */
  async json<T = unknown>(path: string, req: JsonRequest = {}): Promise<T> {
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
    try {
      return JSON.parse(text) as T;
    } catch (err) {
      throw new Error(`${method} ${url}: answer is not JSON`, { cause: err });
    }
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
