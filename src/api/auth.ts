// Authentication and authorization of the sidecar in mode `kubernetes`: the API server decides. The
// bearer token is checked with a TokenReview, each action with a SubjectAccessReview on a virtual
// resource of the krply.dev group, and both answers are cached for a short time.
import { createHash } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { bearerToken, type Action, type Principal } from "./authorizer";

/** The API group of krply's virtual resources; RBAC rules grant them like any other resource. */
export const AUTH_GROUP = "krply.dev";

/** `journal` get for reads, `snapshots` create, `replayplans` for the replay routes, `auditevents` create. */
export type AuthAction = Action;

/** Why a request is refused: 401 without a valid token, 403 when denied, 503 when nobody can say. */
export class AuthError extends Error {
  constructor(
    readonly status: 401 | 403 | 503,
    readonly code: "unauthenticated" | "forbidden" | "unavailable",
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "AuthError";
  }
}

/** What a TokenReview answered about a token. */
export interface TokenReviewStatus {
  authenticated?: boolean;
  user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
  error?: string;
}

/** What a SubjectAccessReview answered about an action. */
export interface AccessReviewStatus {
  allowed: boolean;
  denied?: boolean;
  reason?: string;
}

export interface ReviewUser {
  username: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

/** The two reviews, as the API server answers them; tests and the sidecar pass a real client. */
export interface ReviewApi {
  tokenReview(token: string): Promise<TokenReviewStatus>;
  accessReview(user: ReviewUser, action: AuthAction): Promise<AccessReviewStatus>;
}

/** The minimal HTTP surface of src/kube's KubeClient that the reviews need. */
export interface JsonPoster {
  json<T>(path: string, req: { method: "POST"; body: unknown }): Promise<T>;
}

/** TokenReview and SubjectAccessReview over any JSON client of the API server (authentication.k8s.io/v1). */
export function reviewApi(client: JsonPoster): ReviewApi {
  return {
    async tokenReview(token) {
      const r = await client.json<{ status?: TokenReviewStatus }>(
        "/apis/authentication.k8s.io/v1/tokenreviews",
        {
          method: "POST",
          body: {
            apiVersion: "authentication.k8s.io/v1",
            kind: "TokenReview",
            spec: { token },
          },
        },
      );
      return r.status ?? {};
    },
    async accessReview(user, action) {
      const r = await client.json<{ status?: AccessReviewStatus }>(
        "/apis/authorization.k8s.io/v1/subjectaccessreviews",
        {
          method: "POST",
          body: {
            apiVersion: "authorization.k8s.io/v1",
            kind: "SubjectAccessReview",
            spec: {
              user: user.username,
              uid: user.uid,
              groups: user.groups,
              extra: user.extra,
              resourceAttributes: {
                group: AUTH_GROUP,
                resource: action.resource,
                verb: action.verb,
              },
            },
          },
        },
      );
      return r.status ?? { allowed: false };
    },
  };
}

/** A bounded cache whose entries expire; the oldest entry goes first when it is full. */
export class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; expires: number }>();

  constructor(
    private readonly maxEntries: number,
    private readonly now: () => number = Date.now,
  ) {}

  get(key: string): V | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (e.expires <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return e.value;
  }

  set(key: string, value: V, ttlMs: number): void {
    if (ttlMs <= 0) return;
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(key, { value, expires: this.now() + ttlMs });
  }

  get size(): number {
    return this.entries.size;
  }
}

export interface KubernetesAuthOptions {
  api: ReviewApi;
  /** How long an allowed token or action stays decided; a revoked grant takes effect after it. */
  allowTtlMs?: number;
  /** How long a rejected token or a denied action stays decided (short: a fresh grant should work soon). */
  denyTtlMs?: number;
  /** Most cached decisions, tokens and actions together. */
  maxEntries?: number;
  now?: () => number;
}

export const AUTH_DEFAULTS = { allowTtlMs: 30_000, denyTtlMs: 5_000, maxEntries: 10_000 };

type TokenDecision = { ok: true; user: ReviewUser } | { ok: false; why: string };

/** An authorizer that asks the API server, in the shape the sidecar's server calls. */
export interface KubernetesAuthorizer {
  readonly mode: "kubernetes";
  authorize(headers: IncomingHttpHeaders, action: AuthAction): Promise<Principal>;
}

/**
 * Mode `kubernetes`: a request needs a bearer token the API server authenticates (TokenReview), and
 * its user needs the verb on the krply.dev resource (SubjectAccessReview). Decisions are cached by
 * token digest and by user+action; concurrent requests for one decision share one review. When the
 * API server cannot be asked, the request fails with 503 and nothing is cached.
 */
export function kubernetesAuthorizer(opts: KubernetesAuthOptions): KubernetesAuthorizer {
  const allowTtl = opts.allowTtlMs ?? AUTH_DEFAULTS.allowTtlMs;
  const denyTtl = opts.denyTtlMs ?? AUTH_DEFAULTS.denyTtlMs;
  const max = opts.maxEntries ?? AUTH_DEFAULTS.maxEntries;
  const tokens = new TtlCache<TokenDecision>(max, opts.now);
  const actions = new TtlCache<boolean>(max, opts.now);
  const inflight = new Map<string, Promise<unknown>>();

  function once<T>(key: string, run: () => Promise<T>): Promise<T> {
    const running = inflight.get(key) as Promise<T> | undefined;
    if (running) return running;
    const p = run().finally(() => inflight.delete(key));
    inflight.set(key, p);
    return p;
  }

  const unavailable = (what: string, err: unknown) =>
    new AuthError(
      503,
      "unavailable",
      `cannot ${what}: the Kubernetes API server did not answer (${(err as Error)?.message ?? err})`,
      { cause: err },
    );

  async function authenticate(token: string): Promise<ReviewUser> {
    const key = `t:${createHash("sha256").update(token).digest("hex")}`;
    let d = tokens.get(key);
    if (!d) {
      d = await once(key, async () => {
        let s: TokenReviewStatus;
        try {
          s = await opts.api.tokenReview(token);
        } catch (err) {
          throw unavailable("check the token", err);
        }
        const decision: TokenDecision =
          s.authenticated && s.user?.username
            ? {
                ok: true,
                user: {
                  username: s.user.username,
                  uid: s.user.uid,
                  groups: s.user.groups ?? [],
                  extra: s.user.extra,
                },
              }
            : { ok: false, why: s.error ? `: ${s.error}` : "" };
        tokens.set(key, decision, decision.ok ? allowTtl : denyTtl);
        return decision;
      });
    }
    if (!d.ok) throw new AuthError(401, "unauthenticated", `the token was not accepted${d.why}`);
    return d.user;
  }

  async function allowed(user: ReviewUser, action: AuthAction): Promise<boolean> {
    const key = `a:${JSON.stringify([user.username, user.uid ?? "", [...user.groups].sort(), action.resource, action.verb])}`;
    const hit = actions.get(key);
    if (hit !== undefined) return hit;
    return once(key, async () => {
      let s: AccessReviewStatus;
      try {
        s = await opts.api.accessReview(user, action);
      } catch (err) {
        throw unavailable("check access", err);
      }
      const ok = s.allowed === true && s.denied !== true;
      actions.set(key, ok, ok ? allowTtl : denyTtl);
      return ok;
    });
  }

  return {
    mode: "kubernetes",
    async authorize(headers, action) {
      const token = bearerToken(headers);
      if (!token) {
        throw new AuthError(
          401,
          "unauthenticated",
          "a bearer token is required (Authorization: Bearer <token>)",
        );
      }
      const user = await authenticate(token);
      if (!(await allowed(user, action))) {
        throw new AuthError(
          403,
          "forbidden",
          `user "${user.username}" may not ${action.verb} ${action.resource}.${AUTH_GROUP}`,
        );
      }
      return { user: user.username, groups: user.groups };
    },
  };
}

/**
 * The review API of the cluster the sidecar runs in (or of a kubeconfig): src/kube's client over
 * undici with KubeConfig credentials. It needs create on tokenreviews and subjectaccessreviews
 * (the system:auth-delegator ClusterRole).
 */
export async function clusterReviewApi(
  src: { kubeconfig?: string; context?: string } = {},
): Promise<{ api: ReviewApi; close: () => Promise<void> }> {
  const { KubeClient, loadKubeConfig } = await import("../kube/client");
  const client = await KubeClient.create(loadKubeConfig(src));
  return { api: reviewApi(client), close: () => client.close() };
}
