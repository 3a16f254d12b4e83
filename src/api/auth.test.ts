import {
  AuthError,
  TtlCache,
  kubernetesAuthorizer,
  type AccessReviewStatus,
  type AuthAction,
  type ReviewApi,
  type ReviewUser,
  type TokenReviewStatus,
} from "./auth";
import { assertBindAllowed, bearerToken, noAuth, type Authorizer } from "./authorizer";

const read: AuthAction = { resource: "journal", verb: "get" };
const snap: AuthAction = { resource: "snapshots", verb: "create" };

/** A review API answering from tables, counting each call. */
function tableApi(
  users: Record<string, string>,
  grants: Record<string, string[]>,
): ReviewApi & { calls: { token: number; access: number }; fail: boolean } {
  const api = {
    calls: { token: 0, access: 0 },
    fail: false,
    async tokenReview(token: string): Promise<TokenReviewStatus> {
      api.calls.token++;
      if (api.fail) throw new Error("connect ECONNREFUSED");
      const u = users[token];
      return u ? { authenticated: true, user: { username: u, groups: ["g"] } } : { error: "bad" };
    },
    async accessReview(user: ReviewUser, a: AuthAction): Promise<AccessReviewStatus> {
      api.calls.access++;
      if (api.fail) throw new Error("connect ECONNREFUSED");
      return { allowed: (grants[user.username] ?? []).includes(`${a.verb} ${a.resource}`) };
    },
  };
  return api;
}

const auth = (token?: string) => (token ? { authorization: `Bearer ${token}` } : {});

describe("kubernetesAuthorizer", () => {
  it("answers 401 without a token or with a rejected one, 403 when the action is denied", async () => {
    const api = tableApi({ t1: "reader" }, { reader: ["get journal"] });
    const a = kubernetesAuthorizer({ api });
    await expect(a.authorize(auth(), read)).rejects.toMatchObject({ status: 401 });
    await expect(a.authorize(auth("nope"), read)).rejects.toMatchObject({
      status: 401,
      message: "the token was not accepted: bad",
    });
    await expect(a.authorize(auth("t1"), read)).resolves.toEqual({ user: "reader", groups: ["g"] });
    await expect(a.authorize(auth("t1"), snap)).rejects.toMatchObject({
      status: 403,
      code: "forbidden",
      message: 'user "reader" may not create snapshots.krply.dev',
    });
  });

  it("caches both reviews for their TTL and shares one review among concurrent requests", async () => {
    let now = 0;
    const api = tableApi({ t1: "reader" }, { reader: ["get journal"] });
    const a = kubernetesAuthorizer({ api, allowTtlMs: 1000, denyTtlMs: 100, now: () => now });
    await Promise.all([1, 2, 3].map(() => a.authorize(auth("t1"), read)));
    expect(api.calls).toEqual({ token: 1, access: 1 });
    await a.authorize(auth("t1"), read);
    expect(api.calls).toEqual({ token: 1, access: 1 });
    await expect(a.authorize(auth("t1"), snap)).rejects.toBeInstanceOf(AuthError);
    expect(api.calls).toEqual({ token: 1, access: 2 });
    now = 500; // the denial expired, the grant did not
    await expect(a.authorize(auth("t1"), snap)).rejects.toMatchObject({ status: 403 });
    expect(api.calls).toEqual({ token: 1, access: 3 });
    now = 2000;
    await a.authorize(auth("t1"), read);
    expect(api.calls).toEqual({ token: 2, access: 4 });
  });

  it("answers 503 when the API server cannot be asked, and caches nothing then", async () => {
    const api = tableApi({ t1: "reader" }, { reader: ["get journal"] });
    const a = kubernetesAuthorizer({ api });
    api.fail = true;
    await expect(a.authorize(auth("t1"), read)).rejects.toMatchObject({
      status: 503,
      code: "unavailable",
    });
    api.fail = false;
    await expect(a.authorize(auth("t1"), read)).resolves.toMatchObject({ user: "reader" });
  });
});

describe("TtlCache", () => {
  it("is bounded: the oldest entry goes first", () => {
    const c = new TtlCache<number>(2, () => 0);
    c.set("a", 1, 10);
    c.set("b", 2, 10);
    c.set("c", 3, 10);
    expect(c.size).toBe(2);
    expect(c.get("a")).toBeUndefined();
    expect(c.get("c")).toBe(3);
  });
});

describe("bearerToken and assertBindAllowed", () => {
  it("reads only a well-formed bearer header", () => {
    expect(bearerToken({ authorization: "Bearer abc" })).toBe("abc");
    expect(bearerToken({ authorization: "Basic abc" })).toBeNull();
    expect(bearerToken({})).toBeNull();
  });

  it("allows mode none only on loopback", () => {
    for (const h of ["127.0.0.1", "::1", "[::1]", "localhost", "127.1.2.3"])
      expect(() => assertBindAllowed(h, noAuth)).not.toThrow();
    for (const h of ["0.0.0.0", "::", "10.0.0.5", "example.com"])
      expect(() => assertBindAllowed(h, noAuth)).toThrow(/only allowed on a loopback/);
    const kube: Authorizer = { mode: "kubernetes", authorize: noAuth.authorize };
    expect(() => assertBindAllowed("0.0.0.0", kube)).not.toThrow();
  });
});
