import { readFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { sharedApiServer, type SharedApiServer } from "../apiserver/shared";
import {
  collectEvents,
  kubeRequest,
  type KubeObject,
  type KubeResponse,
  type WatchEvent,
} from "../apiserver/rest";
import { startApiServer } from "../apiserver/index";

// These tests prove the harness is a real kube-apiserver: each one exercises a semantic that krply relies on
// and that a fake would be tempted to get subtly wrong.

type ConfigMap = KubeObject & { data?: Record<string, string> };
type List = { metadata: { resourceVersion: string }; items: ConfigMap[] };
type Status = {
  kind: string;
  code: number;
  reason: string;
  details?: { causes?: { reason: string; field?: string }[] };
};

const suffix = randomBytes(3).toString("hex");
const ns = `apiserver-test-${suffix}`;
const cmPath = `/api/v1/namespaces/${ns}/configmaps`;
let api: SharedApiServer;

function rv(obj: KubeObject): bigint {
  return BigInt(obj.metadata?.resourceVersion ?? "0");
}

function configMap(name: string, data: Record<string, string>): object {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: ns }, data };
}

async function create(name: string, data: Record<string, string>): Promise<ConfigMap> {
  const res = await api.request("admin", "POST", cmPath, configMap(name, data));
  expect(res.status).toBe(201);
  return res.json<ConfigMap>();
}

async function patch(name: string, data: Record<string, string>): Promise<ConfigMap> {
  const res = await api.request("admin", "PATCH", `${cmPath}/${name}`, { data });
  expect(res.status).toBe(200);
  return res.json<ConfigMap>();
}

async function listRV(): Promise<string> {
  const res = await api.request("admin", "GET", cmPath);
  expect(res.status).toBe(200);
  return res.json<List>().metadata.resourceVersion;
}

beforeAll(async () => {
  api = sharedApiServer();
  const res = await api.request("admin", "POST", "/api/v1/namespaces", {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: ns },
  });
  expect(res.status).toBe(201);
});

test("ConfigMap create, update and delete each get a new resourceVersion", async () => {
  const created = await create("crud", { step: "1" });
  const put = await api.request("admin", "PUT", `${cmPath}/crud`, {
    ...created,
    data: { step: "2" },
  });
  expect(put.status).toBe(200);
  const updated = put.json<ConfigMap>();
  // A ConfigMap DELETE answers with a Status, so the deletion's resourceVersion comes from a watch.
  const stream = await api.watch(
    "admin",
    `${cmPath}?watch=1&resourceVersion=${rv(updated)}&fieldSelector=metadata.name%3Dcrud&timeoutSeconds=30`,
  );
  const del = await api.request("admin", "DELETE", `${cmPath}/crud`);
  expect(del.status).toBe(200);
  const events = await collectEvents(stream, seen => seen.some(e => e.type === "DELETED"));
  expect(events.map(e => e.type)).toEqual(["DELETED"]);
  expect(rv(updated)).toBeGreaterThan(rv(created));
  expect(rv(events[0].object)).toBeGreaterThan(rv(updated));
  expect((await api.request("admin", "GET", `${cmPath}/crud`)).status).toBe(404);
});

test("a watch from a list's resourceVersion replays the later writes in order", async () => {
  const from = await listRV();
  const a = await create("ordered", { n: "1" });
  const b = await patch("ordered", { n: "2" });
  expect((await api.request("admin", "DELETE", `${cmPath}/ordered`)).status).toBe(200);
  const stream = await api.watch(
    "admin",
    `${cmPath}?watch=1&resourceVersion=${from}&fieldSelector=metadata.name%3Dordered&timeoutSeconds=30`,
  );
  expect(stream.status).toBe(200);
  const events = await collectEvents(stream, seen => seen.some(e => e.type === "DELETED"));
  expect(events.map(e => e.type)).toEqual(["ADDED", "MODIFIED", "DELETED"]);
  expect(events[0].object.metadata?.resourceVersion).toBe(a.metadata?.resourceVersion);
  expect(events[1].object.metadata?.resourceVersion).toBe(b.metadata?.resourceVersion);
  expect(rv(events[2].object)).toBeGreaterThan(rv(b));
  expect(events[1].object.data).toEqual({ n: "2" });
});

test("allowWatchBookmarks with timeoutSeconds=5 on a cached resource yields a BOOKMARK", async () => {
  const list = (await api.request("admin", "GET", "/api/v1/namespaces")).json<List>();
  const stream = await api.watch(
    "admin",
    "/api/v1/namespaces?watch=1&allowWatchBookmarks=true&timeoutSeconds=5" +
      `&resourceVersion=${list.metadata.resourceVersion}`,
  );
  expect(stream.status).toBe(200);
  // A write elsewhere moves the global revision; the namespaces cache learns it from etcd progress notifies
  // and bookmarks the quiet watch past its start, which is what keeps a real watcher's RV fresh.
  await create(`bookmark-${suffix}`, {});
  const events = await collectEvents(stream, seen => seen.some(e => e.type === "BOOKMARK"), 10_000);
  const bookmark = events.find(e => e.type === "BOOKMARK");
  expect(bookmark).toBeDefined();
  expect(rv(bookmark!.object)).toBeGreaterThan(BigInt(list.metadata.resourceVersion));
});

test("sendInitialEvents=true ends the initial state with an initial-events-end BOOKMARK", async () => {
  const stream = await api.watch(
    "admin",
    "/api/v1/namespaces?watch=1&sendInitialEvents=true&allowWatchBookmarks=true" +
      "&resourceVersionMatch=NotOlderThan&timeoutSeconds=10",
  );
  expect(stream.status).toBe(200);
  const events = await collectEvents(stream, seen => seen.some(e => e.type === "BOOKMARK"));
  const bookmark = events.find(e => e.type === "BOOKMARK");
  const annotations = bookmark?.object.metadata?.annotations as Record<string, string> | undefined;
  expect(annotations?.["k8s.io/initial-events-end"]).toBe("true");
  expect(events.some(e => e.type === "ADDED" && e.object.metadata?.name === ns)).toBe(true);
});

test("server-side apply dry-run by a second field manager returns 409 FieldManagerConflict", async () => {
  const apply = (
    manager: string,
    owner: string,
    query = "",
  ): ReturnType<SharedApiServer["request"]> =>
    api.request(
      "admin",
      "PATCH",
      `${cmPath}/ssa?fieldManager=${manager}${query}`,
      JSON.stringify(configMap("ssa", { owner })),
    );
  expect((await apply("alpha", "alpha")).status).toBe(201);
  const conflict = await apply("beta", "beta", "&dryRun=All");
  expect(conflict.status).toBe(409);
  const status = conflict.json<Status>();
  expect(status.reason).toBe("Conflict");
  expect(status.details?.causes?.map(c => c.reason)).toContain("FieldManagerConflict");
  const current = (await api.request("admin", "GET", `${cmPath}/ssa`)).json<ConfigMap>();
  expect(current.data).toEqual({ owner: "alpha" });
});

test("the recorder reads what it records but gets 403 on secrets", async () => {
  expect((await api.request("recorder", "GET", "/api/v1/namespaces/default/secrets")).status).toBe(
    403,
  );
  expect((await api.request("recorder", "GET", "/api/v1/secrets")).status).toBe(403);
  expect((await api.request("recorder", "GET", "/api/v1/configmaps?limit=1")).status).toBe(200);
  expect((await api.request("recorder", "GET", "/api/v1/namespaces/kube-system")).status).toBe(200);
  const crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
  expect((await api.request("recorder", "GET", crds)).status).toBe(200);
  expect((await api.request("recorder", "POST", cmPath, configMap("nope", {}))).status).toBe(403);
});

test("nobody gets 403 on every resource it asks for", async () => {
  const paths = [
    "/api/v1/namespaces",
    "/api/v1/namespaces/kube-system",
    "/api/v1/configmaps",
    `${cmPath}`,
    "/api/v1/secrets",
    "/api/v1/pods",
    "/api/v1/services",
    "/api/v1/events",
    "/apis/apps/v1/deployments",
    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
    "/apis/rbac.authorization.k8s.io/v1/clusterroles",
    "/apis/node.k8s.io/v1/runtimeclasses",
  ];
  const statuses = await Promise.all(paths.map(p => api.request("nobody", "GET", p)));
  expect(Object.fromEntries(paths.map((p, i) => [p, statuses[i].status]))).toEqual(
    Object.fromEntries(paths.map(p => [p, 403])),
  );
  expect((await api.request("nobody", "POST", cmPath, configMap("nope", {}))).status).toBe(403);
});

test("the replayer writes only in replay-* namespaces it was granted", async () => {
  const replayPath = "/api/v1/namespaces/replay-a/configmaps";
  const body = {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: `r-${suffix}` },
    data: { a: "1" },
  };
  expect((await api.request("replayer", "POST", replayPath, body)).status).toBe(201);
  expect((await api.request("replayer", "GET", `${replayPath}/r-${suffix}`)).status).toBe(200);
  expect((await api.request("replayer", "GET", replayPath)).status).toBe(403);
  expect(
    (await api.request("replayer", "POST", "/api/v1/namespaces/default/configmaps", body)).status,
  ).toBe(403);
  const granted = `replay-${suffix}`;
  await api.grantReplayer(granted);
  const res = await api.request(
    "replayer",
    "POST",
    `/api/v1/namespaces/${granted}/configmaps`,
    body,
  );
  expect(res.status).toBe(201);
  await expect(api.grantReplayer("production")).rejects.toThrow(/replay-\*/);
});

test("the audit log holds the admin's write with user and response resourceVersion", async () => {
  const created = await create("audited", { a: "1" });
  const match = (line: string): boolean => line.includes('"audited"') && line.includes(ns);
  const events = readFileSync(api.auditLogPath, "utf8")
    .split("\n")
    .filter(match)
    .map(line => JSON.parse(line) as Record<string, never>);
  const write = events.find(
    e => e["verb"] === "create" && (e["objectRef"] as { name?: string })["name"] === "audited",
  );
  expect(write).toBeDefined();
  const event = write as unknown as {
    level: string;
    user: { username: string };
    responseObject: ConfigMap;
    requestObject: ConfigMap;
  };
  expect(event.level).toBe("RequestResponse");
  expect(event.user.username).toBe("admin");
  expect(event.responseObject.metadata?.resourceVersion).toBe(created.metadata?.resourceVersion);
  expect(event.requestObject.data).toEqual({ a: "1" });
});

test("LIST with resourceVersionMatch=Exact returns the state as it was at that resourceVersion", async () => {
  await create("exact-1", { v: "1" });
  const at = await listRV();
  await patch("exact-1", { v: "2" });
  await create("exact-2", { v: "1" });
  const query = `resourceVersion=${at}&resourceVersionMatch=Exact&labelSelector=`;
  const past = (await api.request("admin", "GET", `${cmPath}?${query}`)).json<List>();
  const now = (await api.request("admin", "GET", cmPath)).json<List>();
  const pick = (list: List): Record<string, string | undefined> =>
    Object.fromEntries(
      list.items
        .filter(i => i.metadata?.name?.startsWith("exact-"))
        .map(i => [i.metadata?.name, i.data?.v]),
    );
  expect(past.metadata.resourceVersion).toBe(at);
  expect(pick(past)).toEqual({ "exact-1": "1" });
  expect(pick(now)).toEqual({ "exact-1": "2", "exact-2": "1" });
});

// Last in this file: compaction is global, and the tests above read history.
test("after /compact, a configmap watch from the old resourceVersion gets 410 Gone", async () => {
  await create("compacted", { v: "1" });
  const old = await listRV();
  await patch("compacted", { v: "2" });
  const before = await api.revision();
  const result = await api.compact();
  expect(result.compactedRevision).toBeGreaterThanOrEqual(before.revision);
  expect(BigInt(result.compactedRevision)).toBeGreaterThan(BigInt(old));
  expect((await api.revision()).compactedRevision).toBe(result.compactedRevision);

  const stream = await api.watch(
    "admin",
    `${cmPath}?watch=1&resourceVersion=${old}&timeoutSeconds=10`,
  );
  let gone: boolean;
  if (stream.status === 200) {
    const events: WatchEvent[] = await collectEvents(stream, seen => seen.length > 0);
    gone = events[0]?.type === "ERROR" && (events[0].object as unknown as Status).code === 410;
  } else {
    gone = stream.status === 410;
  }
  expect(gone).toBe(true);
  const exact = await api.request(
    "admin",
    "GET",
    `${cmPath}?resourceVersion=${old}&resourceVersionMatch=Exact`,
  );
  expect(exact.status).toBe(410);
});

test("the harness survives SIGKILL and restarts on the same data dir with the same state", async () => {
  const own = await startApiServer();
  try {
    const path = "/api/v1/namespaces/default/configmaps";
    await own.grantReplayer("replay-restart");
    const made = await kubeRequest(own.info, "admin", "POST", path, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "survivor" },
      data: { k: "v" },
    });
    expect(made.status).toBe(201);
    const route = { service: "hook.restart.svc", port: 443, localPort: 9443 };
    await own.egress.register(route);
    const rvOf = (res: KubeResponse): string | undefined =>
      res.json<ConfigMap>().metadata?.resourceVersion;
    const before = { url: own.url, tokens: own.tokens, rv: rvOf(made) };
    await own.restart({ kill: true });
    const after = await kubeRequest(own.info, "admin", "GET", `${path}/survivor`);
    expect(after.status).toBe(200);
    expect({ url: own.url, tokens: own.tokens, rv: rvOf(after) }).toEqual(before);
    // Egress routes live in the data dir too, so a test's local webhook stays reachable.
    expect((await own.egress.log()).routes).toEqual([route]);
    const replayed = "/api/v1/namespaces/replay-restart/configmaps/missing";
    expect((await kubeRequest(own.info, "replayer", "GET", replayed)).status).toBe(404);
    expect((await kubeRequest(own.info, "nobody", "GET", path)).status).toBe(403);
  } finally {
    await own.dispose();
  }
}, 300_000);
