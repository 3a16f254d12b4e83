import type { z } from "zod";
import { JournalError } from "../journal";

/** Where a bad input was found. */
export type FieldLocation = "path" | "query" | "body" | "header";

/** One problem with one input field. */
export interface FieldError {
  in: FieldLocation;
  /** Dotted path of the field ("limit", "before", "watermarks.x"); "" for the whole input. */
  path: string;
  message: string;
}

/** Machine-readable error codes; the status follows from the code. */
export const ERROR_STATUS = {
  invalid_input: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  unanswerable: 422,
  payload_too_large: 413,
  unsupported_media_type: 415,
  internal: 500,
  unavailable: 503,
  timeout: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** The one JSON shape of every error the sidecar answers. */
export interface ErrorBody {
  error: {
    status: number;
    code: ErrorCode;
    message: string;
    fields: FieldError[];
  };
}

/**
 * An error meant for the caller: its message is safe to show and it carries its HTTP status. It is
 * plain data too (toJSON), so a worker can send it back to the main thread unchanged.
 */
export class ApiError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly fields: FieldError[] = [],
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "ApiError";
    this.status = ERROR_STATUS[code];
  }

  body(): ErrorBody {
    return {
      error: { status: this.status, code: this.code, message: this.message, fields: this.fields },
    };
  }
}

/** Turns zod issues into field errors of one location. */
export function fieldErrors(where: FieldLocation, error: z.ZodError): FieldError[] {
  return error.issues
    .map(issue => {
      // A query or path parameter is one string, so its name is the whole path (types, not types.1).
      const path = where === "body" ? issue.path.map(String) : issue.path.slice(0, 1).map(String);
      // An unknown key is reported on the object; name the key itself so the caller sees which.
      if (issue.code === "unrecognized_keys") {
        return issue.keys.map(k => ({
          in: where,
          path: [...path, k].join("."),
          message: "unknown parameter",
        }));
      }
      return [{ in: where, path: path.join("."), message: issue.message }];
    })
    .flat();
}

/** A 400 listing every bad field. */
export function invalidInput(fields: FieldError[]): ApiError {
  const names = [...new Set(fields.map(f => f.path || f.in))].join(", ");
  return new ApiError("invalid_input", `invalid input: ${names}`, fields);
}

/**
 * The caller-facing form of anything a query threw. Materialize throws plain errors for questions
 * it cannot answer as asked (an unknown cluster or kind, an RV on several streams), so those are the
 * caller's to fix (404 or 422); the journal's own failures are the server's (503 when busy).
 */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof JournalError) {
    if (err.code === "INVALID")
      return new ApiError("invalid_input", err.message, [], { cause: err });
    if (err.code === "BUSY")
      return new ApiError("unavailable", "the journal is busy; retry shortly", [], { cause: err });
    return new ApiError("internal", `journal error (${err.code})`, [], { cause: err });
  }
  if (err instanceof Error) {
    const notFound =
      /is not in the journal|was never recorded|no snapshot with id|has no recorded streams/;
    return new ApiError(
      notFound.test(err.message) ? "not_found" : "unanswerable",
      err.message,
      [],
      {
        cause: err,
      },
    );
  }
  return new ApiError("internal", "internal error", [], { cause: err });
}

/** Plain data for an error crossing a worker boundary. */
export interface WireError {
  code: ErrorCode;
  message: string;
  fields: FieldError[];
}

export function toWire(err: unknown): WireError {
  const e = toApiError(err);
  return { code: e.code, message: e.message, fields: e.fields };
}

export function fromWire(w: WireError): ApiError {
  return new ApiError(w.code, w.message, w.fields);
}
