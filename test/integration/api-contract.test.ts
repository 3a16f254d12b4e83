// THE SIDECAR'S CONTRACT: every route answers over a journal the recorder wrote from a real API
// server, with a real gap in it (the recorder was down while etcd was compacted), and each answer
// matches the route's own response schema, the one published in /openapi.json.
import type { z } from "zod";
import { streamIdOf, type StreamKey } from "../../src/event";
import { KubeClient, loadKubeConfig } from "../../src/kube/client";
import { clusterIdentity } from "../../src/watch/cluster-identity";
import { ROUTES, type ApiServer } from "../../src/api";
import {
  startApiServer as startKubeApiServer,
  type ApiServer as KubeApiServer,
} from "../apiserver";
import { kubeRequest } from "../apiserver/rest";
import { call, startApiServer, testServerOptions } from "../support/api-fixtures";
import { tempJournalPath } from "../support/journal-fixtures";
import { fastEngine, rig, until, type Rig } from "./recorder-support";

jest.setTimeout(300_000);

const ns = "api-contract";
let kube: KubeApiServer;
let sidecar: ApiServer;
let tmp: ReturnType<typeof tempJournalPath>;
let clusterId: string;
let cmStream: string;
/** When the recorder was down (the gap's span) and a time after everything. */
const times: Record<"beforeGap" | "inGap" | "afterGap", string> = {
  beforeGap: "",
  inGap: "",
  afterGap: "",
};
const tested = new Set<string>();

async function kubectl(
  method: string,
  path: string,
  body?: object | string,
  fieldManager?: string,
) {
  const q = fieldManager ? `${path.includes("?") ? "&" : "?"}fieldManager=${fieldManager}` : "";
  const headers =
    method === "PATCH" ? { "content-type": "application/merge-patch+json" } : undefined;
  const res = await kubeRequest(kube.info, "admin", method, `${path}${q}`, body, headers);
  if (res.status >= 300)
    throw new Error(`${method} ${path}: ${res.status} ${res.text.slice(0, 200)}`);
  return res.json<{ metadata: { resourceVersion: string } }>();
}

const cms = `/api/v1/namespaces/${ns}/configmaps`;
const deps = `/apis/apps/v1/namespaces/${ns}/deployments`;
const tick = () => new Promise(r => setTimeout(r, 20));

function specs(): { key: StreamKey; kind: string; path: string }[] {
  const base = { clusterId, namespace: ns, selector: "" };
  return [
    {
      key: { ...base, group: "", version: "v1", resource: "configmaps" },
      kind: "ConfigMap",
      path: cms,
    },
    {
      key: { ...base, group: "apps", version: "v1", resource: "deployments" },
      kind: "Deployment",
      path: deps,
    },
  ];
}

async function recording(path: string): Promise<Rig> {
  const r = await rig(kube.kubeconfigs.recorder, fastEngine, path);
  for (const s of specs()) r.supervisor.add(s);
  return r;
}

async function caughtUp(r: Rig, rv: string): Promise<void> {
  await until(
    `journal at RV ${rv}`,
    () =>
      r.journal
        .streams()
        .some(s => s.streamId === cmStream && BigInt(s.lastResourceVersion ?? "0") >= BigInt(rv)),
    60_000,
  );
}

beforeAll(async () => {
  kube = await startKubeApiServer();
  const admin = await KubeClient.create(loadKubeConfig({ kubeconfig: kube.kubeconfigs.admin }));
  clusterId = (await clusterIdentity(admin)).clusterId;
  await admin.close();
  cmStream = streamIdOf(specs()[0].key);
  await kubectl("POST", "/api/v1/namespaces", {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: ns },
  });
  await kubectl("POST", cms, { metadata: { name: "web-config" }, data: { mode: "a" } }, "deployer");
  await kubectl("POST", cms, { metadata: { name: "old" }, data: { x: "1" } }, "deployer");
  await kubectl(
    "POST",
    deps,
    {
      metadata: { name: "web" },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: "web" } },
        template: {
          metadata: { labels: { app: "web" } },
          spec: { containers: [{ name: "app", image: "web:1" }] },
        },
      },
    },
    "deployer",
  );

  tmp = tempJournalPath("krply-api-contract-");
  let r = await recording(tmp.path);
  await until(
    "baselines",
    () => r.journal.streams().filter(s => s.baselinePresent).length === 2,
    60_000,
  );
  await tick();
  await kubectl("PATCH", `${cms}/web-config`, { data: { mode: "b" } }, "editor");
  await kubectl("PATCH", `${deps}/web`, { spec: { replicas: 3 } }, "kubectl-scale");
  const last = await kubectl(
    "PATCH",
    `${cms}/web-config`,
    { metadata: { labels: { tier: "web" } } },
    "labeller",
  );
  await caughtUp(r, last.metadata.resourceVersion);
  await tick();
  // The gap starts at the stream's last record, so "before the gap" is before one more edit.
  times.beforeGap = new Date().toISOString();
  await tick();
  const final = await kubectl(
    "PATCH",
    `${cms}/web-config`,
    { metadata: { labels: { step: "final" } } },
    "labeller",
  );
  await caughtUp(r, final.metadata.resourceVersion);
  await r.close(true);

  // Down while etcd compacts: the resumed watch gets 410 Gone, one GAP, then a relist.
  await kubectl("PATCH", `${cms}/web-config`, { data: { mode: "c" } }, "editor");
  await kubectl("DELETE", `${cms}/old`);
  await tick();
  times.inGap = new Date().toISOString();
  await kube.compact();
  r = await recording(tmp.path);
  await until(
    "the gap's relist",
    () => r.journal.baselines(cmStream).filter(b => b.baseline).length === 2,
    60_000,
  );
  const after = await kubectl("PATCH", `${cms}/web-config`, { data: { mode: "d" } }, "editor");
  await caughtUp(r, after.metadata.resourceVersion);
  await tick();
  times.afterGap = new Date().toISOString();
  expect(r.journal.gaps(cmStream)).toHaveLength(1);
  await r.close(true);

  sidecar = await startApiServer(testServerOptions(tmp.path));
});

afterAll(async () => {
  await sidecar?.close();
  await kube?.dispose();
  tmp?.cleanup();
  // Every route of the server has a contract case here, so a new route needs one too.
  const all = ROUTES.map(r => `${r.method} ${r.path}`).sort();
  expect([...tested].sort()).toEqual(all);
});

/** Calls a route and checks status and, for JSON answers, the route's response schema. */
async function contract(
  method: "GET" | "POST",
  template: string,
  path: string,
  init: RequestInit = {},
  status = 200,
) {
  const route = ROUTES.find(r => r.method === method && r.path === template);
  if (!route) throw new Error(`no route ${method} ${template}`);
  tested.add(`${method} ${template}`);
  const r = await call(sidecar, path, { method, ...init });
  expect({ path, status: r.status, error: r.status === status ? undefined : r.text }).toEqual({
    path,
    status,
    error: undefined,
  });
  if (status < 300 && !("contentType" in route.response)) {
    const parsed = (route.response as z.ZodType).safeParse(r.json);
    expect({ path, issues: parsed.error?.issues ?? [] }).toEqual({ path, issues: [] });
  }
  return r;
}

const gapReason = expect.stringMatching(/.+/);

it("system routes: health, ready, openapi, metrics", async () => {
  await contract("GET", "/v1/health", "/v1/health");
  await contract("GET", "/v1/ready", "/v1/ready");
  const doc = (await contract("GET", "/openapi.json", "/openapi.json")).json;
  for (const r of ROUTES) expect(doc.paths[r.path][r.method.toLowerCase()]).toBeDefined();
  const m = await contract("GET", "/metrics", "/metrics");
  expect(m.text).toContain("krply_api_requests_total");
});

it("clusters, status and streams show the recorded streams and the gap", async () => {
  const c = await contract("GET", "/v1/clusters", "/v1/clusters");
  expect(c.json.data).toEqual([expect.objectContaining({ clusterId, streams: 2 })]);
  const st = await contract("GET", "/v1/status", "/v1/status");
  expect(st.json.data).toMatchObject({ clusters: [clusterId], streams: 2 });
  const s = await contract("GET", "/v1/streams", `/v1/streams?cluster=${clusterId}`);
  const cm = s.json.data.find((x: { streamId: string }) => x.streamId === cmStream);
  expect(cm).toMatchObject({
    baselinePresent: true,
    gaps: [{ streamId: cmStream, reason: gapReason }],
  });
  expect(typeof cm.lagSeconds).toBe("number");
});

it("coverage is incomplete inside the gap and complete before it", async () => {
  const inGap = await contract("GET", "/v1/coverage", `/v1/coverage?at=${times.inGap}`);
  expect(inGap.json.coverage.complete).toBe(false);
  expect(inGap.json.coverage.gaps).toHaveLength(1);
  const before = await contract("GET", "/v1/coverage", `/v1/coverage?at=${times.beforeGap}`);
  expect(before.json.coverage.complete).toBe(true);
});

it("events page with a cursor, filter by type, and export streams NDJSON", async () => {
  const first = await contract(
    "GET",
    "/v1/events",
    `/v1/events?namespace=${ns}&limit=2&objects=false`,
  );
  expect(first.json.data.records).toHaveLength(2);
  const next = await contract(
    "GET",
    "/v1/events",
    `/v1/events?namespace=${ns}&limit=2&objects=false&cursor=${first.json.data.nextCursor}`,
  );
  expect(next.json.data.records[0].ingestSeq).toBeGreaterThan(first.json.data.records[1].ingestSeq);
  const gaps = await contract("GET", "/v1/events", "/v1/events?types=gap");
  expect(gaps.json.data.records).toHaveLength(1);
  expect(gaps.json.coverage.complete).toBe(false);
  const ex = await contract(
    "GET",
    "/v1/export",
    `/v1/export?kind=cm&namespace=${ns}&name=web-config`,
  );
  const lines = ex.text
    .trim()
    .split("\n")
    .map(l => JSON.parse(l) as { type: string });
  expect(lines.length).toBeGreaterThanOrEqual(4);
  expect(JSON.parse(ex.headers.get("krply-coverage")!).complete).toBe(false);
});

it("an object's history shows its edits, their managers, and the gap", async () => {
  const h = await contract(
    "GET",
    "/v1/objects/{kind}/{name}/history",
    `/v1/objects/cm/web-config/history?namespace=${ns}`,
  );
  const kinds = h.json.data.entries.map((e: { kind: string }) => e.kind);
  expect(kinds).toContain("gap");
  expect(h.json.data).toMatchObject({ nextCursor: null, previousCursor: null });
  expect(h.json.data.total).toBe(kinds.filter((k: string) => k === "version").length);
  const managers = h.json.data.entries
    .map((e: { manager: string | null }) => e.manager ?? "")
    .join(" ");
  expect(managers).toMatch(/editor/);
  expect(h.json.coverage.complete).toBe(false);
  const a = await contract(
    "GET",
    "/v1/objects/{kind}/{name}/attribution",
    `/v1/objects/deployment/web/attribution?namespace=${ns}&path=spec.replicas`,
  );
  expect(a.json.data).toEqual([
    expect.objectContaining({
      path: "spec.replicas",
      before: 1,
      after: 3,
      managers: [expect.objectContaining({ manager: "kubectl-scale" })],
    }),
  ]);
});

it("an object at a time or RV, with the gap named inside it", async () => {
  const before = await contract(
    "GET",
    "/v1/objects/{kind}/{name}",
    `/v1/objects/configmap/web-config?namespace=${ns}&at=${times.beforeGap}`,
  );
  expect(before.json.data.object.object.data).toEqual({ mode: "b" });
  const rv = before.json.data.object.provenance.resourceVersion as string;
  const byRv = await contract(
    "GET",
    "/v1/objects/{kind}/{name}",
    `/v1/objects/configmap/web-config?namespace=${ns}&at=rv:${rv}`,
  );
  expect(byRv.json.data.object.object.data).toEqual({ mode: "b" });
  const inGap = await contract(
    "GET",
    "/v1/objects/{kind}/{name}",
    `/v1/objects/configmap/old?namespace=${ns}&at=${times.inGap}`,
  );
  expect(inGap.json.coverage.complete).toBe(false);
  expect(inGap.json.warnings.join(" ")).toMatch(/gap/);
});

it("diff across the gap says it is incomplete; search finds the deleted object", async () => {
  const d = await contract(
    "GET",
    "/v1/diff",
    `/v1/diff?namespace=${ns}&before=${times.beforeGap}&after=${times.afterGap}`,
  );
  expect(d.json.data.hasGaps).toBe(true);
  expect(d.json.coverage.complete).toBe(false);
  expect(d.json.data.objects.map((o: { name: string }) => o.name)).toEqual(
    expect.arrayContaining(["old", "web-config"]),
  );
  const s = await contract("GET", "/v1/search", "/v1/search?name=old&kind=cm");
  expect(s.json.data).toEqual({
    hits: [expect.objectContaining({ name: "old", namespace: ns })],
    nextCursor: null,
  });
});

it("takes a snapshot, lists it, and rebuilds its objects", async () => {
  const p = await contract(
    "POST",
    "/v1/snapshots",
    "/v1/snapshots",
    {
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ at: times.beforeGap, name: "contract" }),
    },
    201,
  );
  expect(p.json.data).toMatchObject({ name: "contract", complete: true });
  const list = await contract("GET", "/v1/snapshots", "/v1/snapshots");
  expect(list.json.data.map((s: { name: string }) => s.name)).toContain("contract");
  const objs = await contract(
    "GET",
    "/v1/snapshots/{id}",
    `/v1/snapshots/${p.json.data.id}?namespace=${ns}`,
  );
  expect(objs.json.data.objects.map((o: { name: string }) => o.name).sort()).toEqual([
    "old",
    "web",
    "web-config",
  ]);
});

it("audit: an empty EventList is accepted, and who groups the recorded changes by actor", async () => {
  const list = { apiVersion: "audit.k8s.io/v1", kind: "EventList", items: [] };
  const a = await contract("POST", "/v1/audit/events", "/v1/audit/events", {
    headers: { "content-type": "application/json" },
    body: JSON.stringify(list),
  });
  expect(a.json).toMatchObject({ accepted: 0, malformed: 0 });
  const w = await contract("GET", "/v1/who", `/v1/who?namespace=${ns}&since=${times.beforeGap}`);
  expect(Array.isArray(w.json.data)).toBe(true);
});

it("replay routes: list, read, plan, dry-run and run answer in their shapes (the full flow is in replay-plan.test.ts)", async () => {
  const json = { "content-type": "application/json" };
  const list = await contract("GET", "/v1/replay-plans", "/v1/replay-plans");
  expect(list.json.data).toEqual([]);
  await contract("GET", "/v1/replay-plans/{id}", "/v1/replay-plans/rp-none", {}, 404);
  await contract(
    "GET",
    "/v1/replay-plans/{id}/approval",
    "/v1/replay-plans/rp-none/approval",
    {},
    404,
  );
  // Planning needs the source namespaces; a body without them is refused before anything runs.
  await contract(
    "POST",
    "/v1/replay-plans",
    "/v1/replay-plans",
    { headers: json, body: JSON.stringify({ at: times.afterGap }) },
    400,
  );
  await contract(
    "POST",
    "/v1/replay-plans/{id}/dry-run",
    "/v1/replay-plans/rp-none/dry-run",
    { headers: json, body: "{}" },
    404,
  );
  await contract(
    "POST",
    "/v1/replay-runs",
    "/v1/replay-runs",
    { headers: json, body: JSON.stringify({ plan: "rp-none", confirm: true }) },
    404,
  );
});
