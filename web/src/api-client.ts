// The UI's one way to the sidecar. Answers are checked at this boundary (zod): a historical answer
// must carry its coverage, because a view never shows history without saying what it does not know.
// Every failure becomes an ApiFailure with the server's code and message, so a view shows an error,
// never an empty table.
// zod/mini: the same checks with a bundle a tenth the size of zod classic.
import * as z from "zod/mini";

export const TOKEN_KEY = "krply.token";

const Gap = z.object({
  streamId: z.string(),
  from: z.string(),
  to: z.nullable(z.string()),
  reason: z.string(),
});
const Down = z.object({ streamId: z.string(), from: z.string(), to: z.string() });
const Unrecorded = z.object({ streamId: z.string(), state: z.string(), reason: z.string() });

export const CoverageSchema = z.object({
  complete: z.boolean(),
  gaps: z.array(Gap),
  downWindows: z._default(z.array(Down), []),
  unrecorded: z._default(z.array(Unrecorded), []),
  prunedBefore: z.nullable(z.string()),
});
export type Coverage = z.infer<typeof CoverageSchema>;
export type GapInfo = z.infer<typeof Gap>;
export type DownInfo = z.infer<typeof Down>;

/** materialize's Answer<T>: data, what the answer covers, and what to beware of. */
export interface Answer<T> {
  data: T;
  coverage: Coverage;
  warnings: string[];
}

const AnswerEnvelope = z.object({
  data: z.unknown(),
  coverage: CoverageSchema,
  warnings: z.array(z.string()),
});
const PlainEnvelope = z.object({ data: z.unknown(), warnings: z.optional(z.array(z.string())) });
const ErrorEnvelope = z.object({
  error: z.object({
    status: z.number(),
    code: z.string(),
    message: z.string(),
    fields: z._default(
      z.array(z.object({ in: z.string(), path: z.string(), message: z.string() })),
      [],
    ),
  }),
});

/** A request that did not give an answer: the server's error, a network failure or a bad answer. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly fields: { path: string; message: string }[] = [],
  ) {
    super(message);
    this.name = "ApiFailure";
  }
}

/** The error an answer's body describes (the sidecar's one error shape), or a generic one. */
export function failureOf(status: number, body: unknown): ApiFailure {
  const e = ErrorEnvelope.safeParse(body);
  if (e.success) {
    const { code, message, fields } = e.data.error;
    return new ApiFailure(status, code, message, fields);
  }
  return new ApiFailure(status, "http_error", `the server answered ${status}`);
}

/** Checks an Answer<T> envelope; T itself is shaped by the view models. */
export function parseAnswer<T>(body: unknown): Answer<T> {
  const r = AnswerEnvelope.safeParse(body);
  if (!r.success)
    throw new ApiFailure(200, "bad_answer", "the server's answer has no coverage; not shown");
  return r.data as Answer<T>;
}

/** Checks a { data, warnings? } envelope (the replay routes). */
export function parsePlain<T>(body: unknown): { data: T; warnings: string[] } {
  const r = PlainEnvelope.safeParse(body);
  if (!r.success) throw new ApiFailure(200, "bad_answer", "the server's answer has no data");
  return { data: r.data.data as T, warnings: r.data.warnings ?? [] };
}

export interface TokenStore {
  get(): string | null;
  set(token: string | null): void;
}

/** A path with its query; empty and undefined values are left out. */
export function pathWith(path: string, query: Record<string, string | undefined> = {}): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== "") q.set(k, v);
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

export interface ApiClient {
  get(
    path: string,
    query?: Record<string, string | undefined>,
    signal?: AbortSignal,
  ): Promise<unknown>;
  post(path: string, body: unknown, signal?: AbortSignal): Promise<unknown>;
}

/** A client that sends the stored token as a bearer token; a 401 tells onUnauthorized first. */
export function apiClient(
  fetchFn: FetchLike,
  tokens: TokenStore,
  onUnauthorized: (f: ApiFailure) => void,
): ApiClient {
  async function send(path: string, init: RequestInit): Promise<unknown> {
    const headers: Record<string, string> = { accept: "application/json" };
    const token = tokens.get();
    if (token) headers.authorization = `Bearer ${token}`;
    if (init.body !== undefined) headers["content-type"] = "application/json";
    let res: Response;
    try {
      res = await fetchFn(path, { ...init, headers, credentials: "omit" });
    } catch (err) {
      if ((err as Error).name === "AbortError") throw err;
      throw new ApiFailure(0, "network", "cannot reach the krply sidecar");
    }
    let body: unknown = null;
    const text = await res.text();
    try {
      body = text === "" ? null : JSON.parse(text);
    } catch {
      body = null;
    }
    if (!res.ok) {
      const f = failureOf(res.status, body);
      if (res.status === 401) onUnauthorized(f);
      throw f;
    }
    if (body === null) throw new ApiFailure(res.status, "bad_answer", "the answer is not JSON");
    return body;
  }
  return {
    get: (path, query, signal) => send(pathWith(path, query), { method: "GET", signal }),
    post: (path, body, signal) =>
      send(path, { method: "POST", body: JSON.stringify(body ?? {}), signal }),
  };
}
