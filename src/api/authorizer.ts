import type { IncomingHttpHeaders } from "node:http";
import { isIP } from "node:net";
import { ApiError } from "./errors";

/**
 * The virtual resources of the krply.dev group a route needs a verb on: `journal` get for reads,
 * `snapshots` create for taking one, `replayplans` for the replay routes, `auditevents` create for
 * the audit webhook backend.
 */
export type ActionResource = "journal" | "snapshots" | "replayplans" | "auditevents";

export interface Action {
  resource: ActionResource;
  verb: string;
}

/** Who made a request, as the authorizer established it. */
export interface Principal {
  user: string;
  groups: string[];
}

/**
 * Decides whether a request may do an action. It resolves with the principal, or rejects with an
 * ApiError: "unauthenticated" (401) without a valid token, "forbidden" (403) when the action is
 * denied, "unavailable" (503) when the decision cannot be made now (the API server is unreachable).
 * The kubernetes mode (TokenReview + SubjectAccessReview with a TTL cache) lives in ./auth.
 */
export interface Authorizer {
  readonly mode: string;
  authorize(headers: IncomingHttpHeaders, action: Action): Promise<Principal>;
}

/** No authentication at all: only for a loopback bind (checked by assertBindAllowed). */
export const noAuth: Authorizer = {
  mode: "none",
  authorize: () => Promise.resolve({ user: "anonymous", groups: [] }),
};

/** Whether a listen host only accepts connections from this machine. */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "");
  if (h === "localhost") return true;
  const kind = isIP(h);
  if (kind === 4) return h.startsWith("127.");
  if (kind === 6) return h === "::1" || h === "0:0:0:0:0:0:0:1";
  return false;
}

/** Refuses to serve without authentication on an address other machines can reach. */
export function assertBindAllowed(host: string, authorizer: Authorizer): void {
  if (authorizer.mode === "none" && !isLoopback(host)) {
    throw new Error(
      `refusing to listen on ${host} without authentication: auth mode "none" is only allowed on a loopback address (127.0.0.1, ::1, localhost)`,
    );
  }
}

/** The bearer token of a request, or null. */
export function bearerToken(headers: IncomingHttpHeaders): string | null {
  const h = headers.authorization;
  if (typeof h !== "string") return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m ? m[1] : null;
}

/** The 401 every authorizer answers without a usable token. */
export const missingToken = (): ApiError =>
  new ApiError("unauthenticated", "a bearer token is required (Authorization: Bearer <token>)");
