// THE ORACLE: snapshots rebuilt from the journal must equal the API server's own state at the same
// resourceVersion (LIST resourceVersion=X&resourceVersionMatch=Exact), resource by resource.
// RVs are opaque in product code; this test alone compares them as numbers, to know when the
// recorder has caught up.
import { randomBytes } from "node:crypto";
import { sharedApiServer, type SharedApiServer } from "../apiserver/shared";
import type { KubeObject } from "../apiserver/rest";
import { tempJournalPath } from "../support/journal-fixtures";
import { diff, recordSnapshot, snapshot } from "../../src/materialize";
import { Recorder } from "../../src/watch/recorder";
import { until } from "./recorder-support";

// 20 recorded pauses plus their LISTs take minutes on a shared machine.
jest.setTimeout(600_000);

const ns = `oracle-${randomBytes(3).toString("hex")}`;
const PAUSES = 20;

interface Res {
  kind: string;
  path: string;
  apiVersion: string;
  make(name: string, n: number): object;
}

const resources: Record<string, Res> = {
  configmaps: {
    kind: "ConfigMap",
    apiVersion: "v1",
    path: `/api/v1/namespaces/${ns}/configmaps`,
    make: (name, n) => ({
      metadata: { name, labels: { step: String(n) } },
      data: { n: String(n) },
    }),
  },
  services: {
    kind: "Service",
    apiVersion: "v1",
    path: `/api/v1/namespaces/${ns}/services`,
    make: (name, n) => ({
      metadata: { name },
      spec: { selector: { app: name }, ports: [{ name: "http", port: 80 + n, targetPort: 8080 }] },
    }),
  },
  deployments: {
    kind: "Deployment",
    apiVersion: "apps/v1",
    path: `/apis/apps/v1/namespaces/${ns}/deployments`,
    make: (name, n) => ({
      metadata: { name },
      spec: {
        replicas: 1 + (n % 3),
        selector: { matchLabels: { app: name } },
        template: {
          metadata: { labels: { app: name } },
          spec: {
            containers: [
              { name: "app", image: `app:${n}`, env: [{ name: "N", value: String(n) }] },
            ],
          },
        },
      },
    }),
  },
  statefulsets: {
    kind: "StatefulSet",
    apiVersion: "apps/v1",
    path: `/apis/apps/v1/namespaces/${ns}/statefulsets`,
    make: (name, n) => ({
      metadata: { name },
      spec: {
        serviceName: name,
        replicas: 1,
        selector: { matchLabels: { app: name } },
        template: {
          metadata: { labels: { app: name } },
          spec: { containers: [{ name: "db", image: `db:${n}` }] },
        },
      },
    }),
  },
};

// A seeded generator keeps the script the same on every run.
let seed = 42;
const rand = (n: number): number => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff;
  return seed % n;
};

let api: SharedApiServer;
let recorder: Recorder;
let tmp: ReturnType<typeof tempJournalPath>;
const live = new Map<string, Set<string>>(Object.keys(resources).map(r => [r, new Set()]));
const pauses: { t: string; x: string }[] = [];

async function call(
  method: string,
  path: string,
  body?: object | string,
  headers?: Record<string, string>,
) {
  const res = await api.request("admin", method, path, body, headers);
  if (res.status >= 300)
    throw new Error(`${method} ${path}: HTTP ${res.status} ${res.text.slice(0, 300)}`);
  return res.json<KubeObject>();
}

const rvOf = (o: KubeObject): bigint => BigInt(o.metadata?.resourceVersion ?? "0");

/** One scripted change; returns the resource it touched. */
async function step(n: number): Promise<void> {
  const names = Object.keys(resources);
  const r = names[rand(names.length)];
  const res = resources[r];
  const existing = [...live.get(r)!];
  const op = existing.length === 0 ? 0 : rand(5);
  if (op === 0 || op === 1) {
    const name = `${r.slice(0, 3)}-${n}`;
    await call("POST", res.path, {
      apiVersion: res.apiVersion,
      kind: res.kind,
      ...res.make(name, n),
    });
    live.get(r)!.add(name);
  } else if (op === 2) {
    const name = existing[rand(existing.length)];
    await call("DELETE", `${res.path}/${name}`);
    live.get(r)!.delete(name);
  } else if (op === 3) {
    // Server-side apply by a named field manager, so managedFields change too.
    const name = existing[rand(existing.length)];
    const body = JSON.stringify({
      apiVersion: res.apiVersion,
      kind: res.kind,
      ...res.make(name, n),
    });
    await call("PATCH", `${res.path}/${name}?fieldManager=oracle-apply&force=true`, body);
  } else {
    const name = existing[rand(existing.length)];
    await call("PATCH", `${res.path}/${name}`, { metadata: { annotations: { edit: String(n) } } });
  }
}

/** Waits until the recorder's stream for a resource has made a write at `rv` durable. */
async function durable(resource: string, rv: bigint, what: string): Promise<void> {
  await until(`recorder to record ${what}`, () => {
    const s = recorder.status().find(st => st.key.resource === resource && st.key.namespace === ns);
    return s?.durableRv != null && BigInt(s.durableRv) >= rv;
  });
}

/** Touches one sentinel per resource, then waits until every stream has recorded its sentinel. */
async function caughtUp(n: number): Promise<void> {
  for (const [r, res] of Object.entries(resources)) {
    const name = `sentinel-${r.slice(0, 3)}`;
    const body = { metadata: { annotations: { pause: String(n) } } };
    await durable(r, rvOf(await call("PATCH", `${res.path}/${name}`, body)), `pause ${n} on ${r}`);
  }
}

beforeAll(async () => {
  api = sharedApiServer();
  await call("POST", "/api/v1/namespaces", {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: ns },
  });
  for (const [r, res] of Object.entries(resources)) {
    const name = `sentinel-${r.slice(0, 3)}`;
    await call("POST", res.path, {
      apiVersion: res.apiVersion,
      kind: res.kind,
      ...res.make(name, 0),
    });
  }
  tmp = tempJournalPath("krply-oracle-");
  recorder = new Recorder({
    journalPath: tmp.path,
    kubeconfig: api.kubeconfigs.recorder,
    selection: { resources: Object.keys(resources), namespaces: [ns], selector: "" },
    journal: { sync: "NORMAL" },
    mirrorEveryMs: 60_000,
    journalRetryMs: 0,
  });
  await recorder.start();
});

afterAll(async () => {
  await recorder?.stop();
  tmp?.cleanup();
});

it("rebuilds the server's exact state at each of 20 pauses, resource by resource", async () => {
  for (let p = 0; p < PAUSES; p++) {
    const ops = 3 + rand(4);
    for (let i = 0; i < ops; i++) await step(p * 10 + i);
    await caughtUp(p);
    // X: the server's current resourceVersion once everything before it is durable in the journal.
    const list = await call("GET", `${resources.configmaps.path}?limit=1`);
    pauses.push({ t: new Date().toISOString(), x: list.metadata!.resourceVersion! });
    await new Promise(r => setTimeout(r, 5)); // later events must carry a later observedAt
  }
  for (let i = 0; i < 5; i++) await step(1000 + i); // history after the last pause must not leak in

  const journal = recorder.openJournal!;
  const clusterId = recorder.clusterIdentity!.clusterId;
  const revision = await api.revision();
  expect(revision.compactedRevision).toBeLessThan(Number(pauses[0].x));
  let compared = 0;
  for (const [i, pause] of pauses.entries()) {
    const snap = recordSnapshot(journal, snapshot(journal, clusterId, pause.t, `oracle-${i}`).data);
    expect({ pause: i, complete: snap.complete, missing: snap.missing }).toEqual({
      pause: i,
      complete: true,
      missing: [],
    });
    for (const [r, res] of Object.entries(resources)) {
      const exact = await call(
        "GET",
        `${res.path}?resourceVersion=${pause.x}&resourceVersionMatch=Exact`,
      );
      // List items carry no kind/apiVersion; everything else must match byte for byte as JSON.
      const server = Object.fromEntries(
        (exact.items as KubeObject[]).map(o => [
          o.metadata!.name!,
          { ...o, kind: undefined, apiVersion: undefined },
        ]),
      );
      const rebuilt = Object.fromEntries(
        snap.objects
          .filter(o => o.kind === res.kind && o.namespace === ns)
          .map(o => [o.name, { ...o.object, kind: undefined, apiVersion: undefined }]),
      );
      compared += Object.keys(server).length;
      expect({ pause: i, resource: r, objects: rebuilt }).toEqual({
        pause: i,
        resource: r,
        objects: server,
      });
    }
  }
  // Not vacuous: beyond the 4 sentinels, the script's objects come and go across the pauses.
  expect(compared).toBeGreaterThan(PAUSES * 8);
});

it("diffs exactly the scripted edits, attributed to their managers, and nothing from server noise", async () => {
  const cm = resources.configmaps;
  const dep = resources.deployments;
  await call("POST", cm.path, {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "diff-cm" },
    data: { a: "1" },
  });
  const created = await call("POST", dep.path, {
    apiVersion: "apps/v1",
    kind: "Deployment",
    ...dep.make("diff-web", 0),
  });
  await durable("deployments", rvOf(created), "diff-web");
  await durable("configmaps", rvOf(await call("GET", `${cm.path}/diff-cm`)), "diff-cm");
  const t1 = new Date().toISOString();
  await new Promise(r => setTimeout(r, 5));

  const edited = await call("PATCH", `${cm.path}/diff-cm?fieldManager=edit-cm`, {
    data: { a: "2" },
  });
  await call("PATCH", `${dep.path}/diff-web?fieldManager=kubectl-scale`, { spec: { replicas: 3 } });
  const labelled = await call(
    "PATCH",
    `${dep.path}/diff-web?fieldManager=oracle-labels`,
    JSON.stringify({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "diff-web", labels: { tier: "web" } },
    }),
  );
  await durable("configmaps", rvOf(edited), "the configmap edit");
  await durable("deployments", rvOf(labelled), "the deployment edits");
  const t2 = new Date().toISOString();

  const { data: d, coverage } = diff(
    recorder.openJournal!,
    recorder.clusterIdentity!.clusterId,
    t1,
    t2,
    { namespace: ns },
  );
  expect(coverage.complete).toBe(true);
  expect(d.hasGaps).toBe(false);
  const summary = d.objects.map(o => ({
    name: o.name,
    change: o.change,
    fields: o.changes.map(c => [c.path, c.before, c.after, c.managers[0]?.manager]),
  }));
  expect(summary).toEqual([
    { name: "diff-cm", change: "changed", fields: [["data.a", "1", "2", "edit-cm"]] },
    {
      name: "diff-web",
      change: "changed",
      fields: [
        ["metadata.labels", undefined, { tier: "web" }, "oracle-labels"],
        ["spec.replicas", 1, 3, "kubectl-scale"],
      ],
    },
  ]);
});
