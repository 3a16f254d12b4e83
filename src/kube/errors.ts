import { z } from "zod";

/** The Kubernetes Status object as returned on failed requests and in watch ERROR events. */
export const StatusSchema = z.looseObject({
  kind: z.literal("Status").optional(),
  status: z.string().optional(),
  message: z.string().optional(),
  reason: z.string().optional(),
  code: z.number().int().optional(),
  details: z.looseObject({}).optional(),
});
export type Status = z.infer<typeof StatusSchema>;

/** The API server answered with a non-2xx status; status, reason and details come from its Status. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly reason: string,
    readonly details: Record<string, unknown> | undefined,
    /** Milliseconds from a Retry-After header, when the server sent one. */
    readonly retryAfterMs?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "ApiError";
  }
}

/** The request never got an HTTP answer: DNS, TLS, refused or reset connection, aborted body. */
export class NetworkError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "NetworkError";
  }
}

/** Parses a Retry-After header (seconds or an HTTP date) into milliseconds from now. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined || value.trim() === "") return undefined;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

/** Builds an ApiError from an HTTP status and a response body that may or may not be a Status. */
export function apiErrorFrom(
  httpStatus: number,
  body: string,
  what: string,
  retryAfter?: string,
): ApiError {
  let status: Status | undefined;
  try {
    const parsed = StatusSchema.safeParse(JSON.parse(body));
    if (parsed.success) status = parsed.data;
  } catch {
    status = undefined; // not JSON: a proxy or a plain-text error page
  }
  const reason = status?.reason ?? reasonForHttp(httpStatus);
  const detail = status?.message ?? body.slice(0, 200);
  return new ApiError(
    `${what}: ${httpStatus} ${reason}${detail ? `: ${detail}` : ""}`,
    httpStatus,
    reason,
    status?.details,
    parseRetryAfter(retryAfter),
  );
}

/** Builds an ApiError from a Status carried inside a watch ERROR event. */
export function apiErrorFromStatus(status: Status, what: string): ApiError {
  const code = status.code ?? 500;
  const reason = status.reason ?? reasonForHttp(code);
  return new ApiError(
    `${what}: ${code} ${reason}: ${status.message ?? ""}`,
    code,
    reason,
    status.details,
  );
}

function reasonForHttp(status: number): string {
  const reasons: Record<number, string> = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    409: "Conflict",
    410: "Expired",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
  };
  return reasons[status] ?? "Unknown";
}

/** Wraps anything thrown by the HTTP layer as a NetworkError unless it is already typed. */
export function toNetworkError(err: unknown, what: string): Error {
  if (err instanceof ApiError || err instanceof NetworkError) return err;
  const code = (err as { code?: string } | null)?.code;
  const msg = err instanceof Error ? err.message : String(err);
  return new NetworkError(`${what}: ${msg}`, code, { cause: err });
}
