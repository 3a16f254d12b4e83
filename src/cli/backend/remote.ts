import type { JournalRecord } from "../../event";
import {
  type Answer,
  type SearchHit,
  type SnapshotSummary,
  type StreamReport,
  type TimelineEntry,
} from "../../materialize";
import { CliError, EXIT } from "../errors";
import {
  SEARCH_PAGE,
  TIMELINE_PAGE,
  type Backend,
  type ExportQuery,
  type ObjectAtAnswer,
  type ObjectQuery,
} from "./backend";
import { readAllPages } from "./pages";

/** A page of GET /v1/objects/{kind}/{name}/history. */
interface HistoryPage {
  entries: TimelineEntry[];
  nextCursor: string | null;
}

/** The sidecar's one error shape (docs/api.md). */
interface ErrorBody {
  error?: {
    status?: number;
    code?: string;
    message?: string;
    fields?: { path: string; message: string }[];
  };
}

type Query = Record<string, string | number | boolean | undefined>;

const REQUEST_TIMEOUT_MS = 60_000;

/** The exit code a sidecar status means for a script. */
function exitOf(status: number): CliError["exitCode"] {
  if (status === 401 || status === 403) return EXIT.DENIED;
  if (status === 404) return EXIT.NOT_FOUND;
  if (status === 400 || status === 405 || status === 413 || status === 422) return EXIT.USAGE;
  return EXIT.SERVER;
}

/**
 * The token for --server when --token is not given: the current context's user of the kubeconfig
 * (tokens, exec plugins, auth providers), through client-node, which is loaded only here.
 */
async function kubeconfigToken(): Promise<string | undefined> {
  const { KubeConfig } = await import("@kubernetes/client-node");
  const kc = new KubeConfig();
  try {
    kc.loadFromDefault();
  } catch {
    return undefined;
  }
  const opts: { headers?: Record<string, string> } = { headers: {} };
  try {
    await kc.applyToHTTPSOptions(opts as never);
  } catch {
    // A context this cannot use (no user, a plain-http cluster) gives no token; a sidecar with
    // auth on then answers 401, which names the fix (--token).
    return undefined;
  }
  const auth = opts.headers?.Authorization ?? opts.headers?.authorization;
  return typeof auth === "string" && /^Bearer /i.test(auth) ? auth.slice(7) : undefined;
}

/**
 * Answers from the query sidecar over HTTP. It returns the sidecar's Answer JSON as it came, so a
 * command prints exactly what it prints for the same journal read locally.
 */
export class RemoteBackend implements Backend {
  private constructor(
    readonly where: string,
    private readonly token: string | undefined,
  ) {}

  static async connect(server: string, opts: { token?: string }): Promise<RemoteBackend> {
    let url: URL;
    try {
      url = new URL(server);
    } catch {
      throw new CliError(
        `--server "${server}" is not a URL, e.g. http://localhost:8080`,
        EXIT.USAGE,
      );
    }
    if (url.protocol !== "http:" && url.protocol !== "https:")
      throw new CliError(`--server "${server}" must be an http or https URL`, EXIT.USAGE);
    const token = opts.token ?? (await kubeconfigToken());
    return new RemoteBackend(url.toString().replace(/\/$/, ""), token);
  }

  private url(path: string, query: Query = {}): string {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(query))
      if (v !== undefined && v !== "") q.set(k, String(v));
    const s = q.toString();
    return `${this.where}${path}${s ? `?${s}` : ""}`;
  }

  private async request(
    method: string,
    path: string,
    query: Query = {},
    body?: unknown,
  ): Promise<Response> {
    const headers: Record<string, string> = { accept: "application/json" };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    if (body !== undefined) headers["content-type"] = "application/json";
    let res: Response;
    try {
      res = await fetch(this.url(path, query), {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw new CliError(
        `cannot reach the krply server at ${this.where} (${cause?.code ?? cause?.message ?? (err as Error).message})`,
        EXIT.SERVER,
        { cause: err },
      );
    }
    if (res.ok) return res;
    let detail = `HTTP ${res.status}`;
    try {
      const b = (await res.json()) as ErrorBody;
      if (b.error?.message) detail = b.error.message;
      const fields = b.error?.fields ?? [];
      if (fields.length > 0)
        detail += ` (${fields.map(f => `${f.path}: ${f.message}`).join("; ")})`;
    } catch {
      // Not our JSON error (a proxy in between); the status says enough.
    }
    throw new CliError(`server ${this.where}: ${detail}`, exitOf(res.status));
  }

  private async get<T>(path: string, query: Query = {}): Promise<T> {
    return (await (await this.request("GET", path, query)).json()) as T;
  }

  private refPath(q: ObjectQuery): string {
    return `/v1/objects/${encodeURIComponent(q.kind)}/${encodeURIComponent(q.name)}`;
  }

  private refQuery(q: ObjectQuery): Query {
    return { cluster: q.cluster, namespace: q.namespace, group: q.group };
  }

  status(cluster?: string) {
    return this.get<Awaited<ReturnType<Backend["status"]>>>("/v1/status", { cluster });
  }

  async coverage(cluster?: string): Promise<Answer<StreamReport[]>> {
    const a = await this.get<Answer<(StreamReport & { lagSeconds?: unknown })[]>>("/v1/streams", {
      cluster,
    });
    // The route adds the lag the sidecar sees now; the local report has no such field.
    return { ...a, data: a.data.map(({ lagSeconds: _lag, ...s }) => s) };
  }

  /** Every page of the history, joined as the local backend joins its pages. */
  async timeline(q: Parameters<Backend["timeline"]>[0]) {
    return readAllPages<TimelineEntry, string>(async cursor => {
      const page = await this.get<Answer<HistoryPage>>(`${this.refPath(q)}/history`, {
        ...this.refQuery(q),
        status: q.includeStatus || undefined,
        limit: TIMELINE_PAGE,
        cursor,
      });
      return { answer: { ...page, data: page.data.entries }, next: page.data.nextCursor };
    });
  }

  objectAt(q: Parameters<Backend["objectAt"]>[0]): Promise<ObjectAtAnswer> {
    const at =
      "time" in q.at ? { at: q.at.time } : { rv: q.at.resourceVersion, stream: q.at.streamId };
    return this.get<ObjectAtAnswer>(this.refPath(q), { ...this.refQuery(q), ...at });
  }

  diff(q: Parameters<Backend["diff"]>[0]) {
    return this.get<Awaited<ReturnType<Backend["diff"]>>>("/v1/diff", {
      cluster: q.cluster,
      namespace: q.namespace,
      before: q.since,
      after: q.until,
      status: q.includeStatus || undefined,
    });
  }

  /** Every page of the search, joined as the local backend joins its pages. */
  async search(q: Parameters<Backend["search"]>[0]) {
    return readAllPages<SearchHit, string>(async cursor => {
      const page = await this.get<Answer<{ hits: SearchHit[]; nextCursor: string | null }>>(
        "/v1/search",
        {
          cluster: q.cluster,
          kind: q.kind,
          name: q.namePrefix,
          labels: q.selector,
          limit: SEARCH_PAGE,
          cursor,
        },
      );
      return { answer: { ...page, data: page.data.hits }, next: page.data.nextCursor };
    });
  }

  who(q: Parameters<Backend["who"]>[0]) {
    return this.get<Awaited<ReturnType<Backend["who"]>>>("/v1/who", {
      cluster: q.cluster,
      namespace: q.namespace,
      since: q.since,
      until: q.until,
      limit: q.limit,
    });
  }

  async snapshot(q: Parameters<Backend["snapshot"]>[0]) {
    const body = {
      cluster: q.cluster,
      at: q.at,
      name: q.name ?? `manual-${q.at}`,
      objects: q.objects,
      record: q.record,
    };
    const res = await this.request("POST", "/v1/snapshots", {}, body);
    return (await res.json()) as Awaited<ReturnType<Backend["snapshot"]>>;
  }

  snapshots(cluster?: string) {
    return this.get<Answer<SnapshotSummary[]>>("/v1/snapshots", { cluster });
  }

  async exportRecords(q: ExportQuery, onRecord: (r: JournalRecord) => void): Promise<number> {
    const res = await this.request("GET", "/v1/export", {
      cluster: q.cluster,
      kind: q.kind,
      namespace: q.namespace,
      name: q.name,
      since: q.since,
      until: q.until,
    });
    let n = 0;
    let rest = "";
    const decoder = new TextDecoder();
    const line = (l: string) => {
      if (l.trim() === "") return;
      const rec = JSON.parse(l) as JournalRecord & ErrorBody;
      // An export that fails after it started ends with an error object instead of a record.
      if (rec.error) {
        throw new CliError(
          `server ${this.where}: export failed after ${n} records: ${rec.error.message ?? "unknown error"}`,
          EXIT.SERVER,
        );
      }
      onRecord(rec);
      n++;
    };
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      rest += decoder.decode(chunk, { stream: true });
      const lines = rest.split("\n");
      rest = lines.pop()!;
      lines.forEach(line);
    }
    line(rest + decoder.decode());
    return n;
  }

  async close(): Promise<void> {}
}
