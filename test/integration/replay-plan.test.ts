// Replay end to end against the real API server: record a namespace, change and delete things, plan
// its state at T into a new namespace, dry-run, approve, apply; then conflict and rejection verdicts.
import { randomBytes } from "node:crypto";
import { parse } from "yaml";
import { openReplayStore, type ReplayStore } from "../../src/journal";
import type { KubeClient } from "../../src/kube/client";
import {
  ApplyRefused,
  approvePlan,
  applyStored,
  createPlan,
  dryRunStored,
  REPLAY_PLANS_PATH,
  sanitize,
  type Plan,
} from "../../src/replay";
import { runCli } from "../../src/cli/main";
import {
  clusterReviewApi,
  kubernetesAuthorizer,
  replayRoutes,
  startApiServer,
} from "../../src/api";
import { testServerOptions } from "../support/api-fixtures";
import { Recorder } from "../../src/watch/recorder";
import { sharedApiServer, type SharedApiServer } from "../apiserver/shared";
import { tempJournalPath } from "../support/journal-fixtures";
import { clientOf, ensureNamespace, installReplayPlanCrd } from "../support/replay-fixtures";
import { until } from "./recorder-support";

jest.setTimeout(300_000);

const hex = randomBytes(3).toString("hex");
const src = `rsrc-${hex}`;
const LABEL = "krply.dev/plan";

type Obj = Record<string, unknown> & { metadata?: Record<string, unknown> };

let api: SharedApiServer;
let admin: KubeClient;
let recorder: Recorder;
let store: ReplayStore;
let tmp: ReturnType<typeof tempJournalPath>;
let T = "";
let firstPlan: Plan | undefined;
let X = "";

const paths = {
  configmaps: `/api/v1/namespaces/${src}/configmaps`,
  services: `/api/v1/namespaces/${src}/services`,
  deployments: `/apis/apps/v1/namespaces/${src}/deployments`,
};

const call = <T = Obj>(path: string, method = "GET", body?: unknown): Promise<T> =>
  admin.json<T>(path, { method: method as "GET", body });

async function durable(resource: string, rv: string): Promise<void> {
  await until(`recorder to record ${resource}@${rv}`, () => {
    const s = recorder
      .status()
      .find(
        st =>
          st.key.resource === resource && (st.key.namespace === src || resource === "namespaces"),
      );
    return s?.durableRv != null && BigInt(s.durableRv) >= BigInt(rv);
  });
}

/** Touches a sentinel of every recorded resource and waits until the recorder has it durable. */
async function caughtUp(n: number): Promise<void> {
  const touch = async (resource: string, path: string) => {
    const o = await admin.json<Obj>(path, {
      method: "PATCH",
      body: { metadata: { annotations: { pause: String(n) } } },
      contentType: "application/merge-patch+json",
    });
    await durable(resource, String(o.metadata!.resourceVersion));
  };
  await touch("namespaces", `/api/v1/namespaces/${src}`);
  await touch("configmaps", `${paths.configmaps}/sentinel`);
  await touch("services", `${paths.services}/web`);
  await touch("deployments", `${paths.deployments}/web`);
}

const deployment = (image: string): Obj => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web", labels: { app: "web" } },
  spec: {
    replicas: 2,
    selector: { matchLabels: { app: "web" } },
    template: {
      metadata: { labels: { app: "web" } },
      spec: {
        containers: [{ name: "app", image, envFrom: [{ configMapRef: { name: "app-config" } }] }],
        volumes: [{ name: "scratch", emptyDir: {} }],
      },
    },
  },
});

beforeAll(async () => {
  api = sharedApiServer();
  admin = await clientOf(api.kubeconfigs.admin);
  await installReplayPlanCrd(admin);
  await ensureNamespace(admin, src, { team: "shop" });
  await call(paths.configmaps, "POST", { metadata: { name: "sentinel" }, data: {} });
  await call(paths.configmaps, "POST", {
    metadata: {
      name: "app-config",
      annotations: { "kubectl.kubernetes.io/last-applied-configuration": "{}" },
    },
    data: { a: "1", mode: "blue" },
  });
  await call(paths.configmaps, "POST", {
    metadata: { name: "to-delete", labels: {} },
    data: { gone: "soon" },
  });
  await call(paths.services, "POST", {
    metadata: { name: "web" },
    spec: {
      type: "NodePort",
      selector: { app: "web" },
      ports: [{ name: "http", port: 80, targetPort: 8080 }],
    },
  });
  await call(paths.deployments, "POST", deployment("app:1"));

  tmp = tempJournalPath("krply-replay-");
  recorder = new Recorder({
    journalPath: tmp.path,
    kubeconfig: api.kubeconfigs.recorder,
    selection: {
      resources: ["namespaces", "configmaps", "services", "deployments"],
      namespaces: [src],
      selector: "",
    },
    journal: { sync: "NORMAL" },
    mirrorEveryMs: 60_000,
    journalRetryMs: 0,
  });
  await recorder.start();
  await caughtUp(0);
  // T: everything before it is durable; X is the server's resourceVersion there (the oracle).
  X = String((await call<Obj>(`${paths.configmaps}?limit=1`)).metadata!.resourceVersion);
  T = new Date().toISOString();
  await new Promise(r => setTimeout(r, 20));

  // After T: change, delete and add. None of this may reach the plan.
  await admin.json(`${paths.configmaps}/app-config`, {
    method: "PATCH",
    body: { data: { a: "2", mode: "green" } },
    contentType: "application/merge-patch+json",
  });
  await call(`${paths.configmaps}/to-delete`, "DELETE");
  await call(paths.configmaps, "POST", { metadata: { name: "born-later" }, data: {} });
  await admin.json(`${paths.deployments}/web`, {
    method: "PATCH",
    body: JSON.stringify(deployment("app:2")),
    query: { fieldManager: "later", force: true },
    contentType: "application/apply-patch+yaml",
  });
  await caughtUp(1);
  store = openReplayStore(tmp.path);
});

afterAll(async () => {
  await recorder?.stop();
  store?.close();
  await admin?.close();
  tmp?.cleanup();
});

/** Every field of `expected` is in `actual` with the same value (lists item by item). */
function expectContains(expected: unknown, actual: unknown, path = ""): void {
  if (Array.isArray(expected)) {
    expect({ path, isList: Array.isArray(actual), length: (actual as unknown[])?.length }).toEqual({
      path,
      isList: true,
      length: expected.length,
    });
    expected.forEach((e, i) => expectContains(e, (actual as unknown[])[i], `${path}[${i}]`));
  } else if (expected !== null && typeof expected === "object") {
    expect({ path, isObject: actual !== null && typeof actual === "object" }).toEqual({
      path,
      isObject: true,
    });
    for (const [k, v] of Object.entries(expected))
      expectContains(v, (actual as Obj)[k], `${path}.${k}`);
  } else {
    expect({ path, value: actual }).toEqual({ path, value: expected });
  }
}

/** Approves like a person would, then stamps what krply's Mutate binding stamps under `pepr dev`. */
async function approve(id: string): Promise<void> {
  const parts = await approvePlan(admin, id);
  // No admission webhook runs in this suite (the gate's own loop test runs `pepr dev`), so the
  // approver the binding would take from userInfo is written here as that binding would.
  for (const p of parts) {
    await admin.json(`${REPLAY_PLANS_PATH}/${p.metadata.name}`, {
      method: "PATCH",
      body: {
        spec: {
          approvedBy: "admin",
          approvedAt: new Date().toISOString(),
          approvalExpiresAt: new Date(Date.now() + 3_600_000).toISOString(),
        },
      },
      contentType: "application/merge-patch+json",
    });
  }
}

const view = () => recorder.openJournal!;

it("replays the namespace as it was at T into a new namespace, equal to the sanitized state at T", async () => {
  const dst = `rdst-${hex}`;
  const { plan, parts } = await createPlan(view(), store, admin, {
    at: T,
    sourceNamespaces: [src],
    policy: { namespaceMap: { [src]: dst } },
    intoSourceCluster: true,
  });
  expect(parts).toHaveLength(1);
  expect(parts[0].spec.digest).toBe(plan.digest);
  const names = plan.objects.map(o => `${o.ref.kind}/${o.ref.namespace}/${o.ref.name}`);
  expect(names).toEqual([
    `Namespace//${dst}`,
    `ConfigMap/${dst}/app-config`,
    `ConfigMap/${dst}/sentinel`,
    `ConfigMap/${dst}/to-delete`,
    `Service/${dst}/web`,
    `Deployment/${dst}/web`,
  ]);

  // The oracle: the server's own state at X, sanitized and mapped, is exactly what the plan holds.
  const exact = async (path: string) =>
    (await call<{ items: Obj[] }>(`${path}?resourceVersion=${X}&resourceVersionMatch=Exact`)).items;
  const atX = [
    ...(await exact("/api/v1/namespaces"))
      .filter(o => o.metadata!.name === src)
      .map(o => ({ ...o, apiVersion: "v1", kind: "Namespace" })),
    ...(await exact(paths.configmaps)).map(o => ({ ...o, apiVersion: "v1", kind: "ConfigMap" })),
    ...(await exact(paths.services)).map(o => ({ ...o, apiVersion: "v1", kind: "Service" })),
    ...(await exact(paths.deployments)).map(o => ({
      ...o,
      apiVersion: "apps/v1",
      kind: "Deployment",
    })),
  ];
  for (const o of plan.objects) {
    const server = atX.find(s => s.kind === o.ref.kind && s.metadata!.name === o.source.name)!;
    const expected = sanitize(server) as Obj;
    const md = expected.metadata!;
    md.labels = { ...(md.labels as object), [LABEL]: plan.id };
    if (o.ref.kind === "Namespace") {
      md.name = dst;
      (md.labels as Record<string, string>)["kubernetes.io/metadata.name"] = dst;
    } else md.namespace = dst;
    expect({ object: o.ref.name, manifest: o.manifest }).toEqual({
      object: o.ref.name,
      manifest: expected,
    });
  }
  const cfg = plan.objects.find(o => o.ref.name === "app-config")!.manifest as Obj;
  expect(cfg.data).toEqual({ a: "1", mode: "blue" });
  expect((cfg.metadata as Obj).annotations).toBeUndefined();

  // Apply refuses before a dry run.
  await expect(applyStored(store, admin, plan.id, { confirm: true })).rejects.toThrow(/no dry run/);
  const { dryRun } = await dryRunStored(store, admin, plan.id);
  expect(dryRun.verdicts.map(v => v.verdict)).toEqual(Array(6).fill("would-create"));
  expect(dryRun.ok).toBe(true);
  // Dry run created nothing.
  await expect(admin.json(`/api/v1/namespaces/${dst}`)).rejects.toMatchObject({ status: 404 });
  const cr = await call<Obj>(`${REPLAY_PLANS_PATH}/${plan.id}`);
  expect((cr.status as Obj).dryRun).toMatchObject({
    digest: plan.digest,
    ok: true,
    verdicts: { wouldCreate: 6 },
  });

  // Not approved yet; then approved but not confirmed.
  await expect(applyStored(store, admin, plan.id, { confirm: true })).rejects.toThrow(
    /not approved/,
  );
  await approve(plan.id);
  await expect(applyStored(store, admin, plan.id, { confirm: false })).rejects.toThrow(
    ApplyRefused,
  );
  const { run } = await applyStored(store, admin, plan.id, { confirm: true });
  expect(run).toMatchObject({ ok: true, applied: 6, notApplied: 0 });
  expect(run.items.map(i => i.result)).toEqual(Array(6).fill("created"));

  // Every field the plan keeps is live in the target, with the plan's field manager.
  for (const o of plan.objects) {
    const live = await call<Obj>(
      o.ref.kind === "Namespace"
        ? `/api/v1/namespaces/${dst}`
        : `${(paths as Record<string, string>)[o.ref.resource].replace(src, dst)}/${o.ref.name}`,
    );
    expectContains(o.manifest, live, `${o.ref.kind}/${o.ref.name}`);
    const managers = (live.metadata!.managedFields as { manager: string }[]).map(m => m.manager);
    expect(managers).toContain(`krply-plan-${plan.id}`);
    expect(live.metadata!.uid).not.toBe(undefined);
  }
  const later = await admin.json(`/api/v1/namespaces/${dst}/configmaps/born-later`).catch(e => e);
  expect(later).toMatchObject({ status: 404 });

  firstPlan = plan;
  // A second dry run of the applied plan finds nothing to do.
  const again = await dryRunStored(store, admin, plan.id);
  expect(again.dryRun.verdicts.filter(v => v.ref.kind !== "Namespace").map(v => v.verdict)).toEqual(
    Array(5).fill("unchanged"),
  );
});

it("gives a conflict verdict for a field another manager owns, and apply refuses", async () => {
  const dst = `rcon-${hex}`;
  await ensureNamespace(admin, dst);
  await admin.json(`/api/v1/namespaces/${dst}/configmaps`, {
    method: "POST",
    query: { fieldManager: "other-team" },
    body: { metadata: { name: "app-config" }, data: { a: "theirs" } },
  });
  const { plan } = await createPlan(view(), store, admin, {
    at: T,
    sourceNamespaces: [src],
    policy: { namespaceMap: { [src]: dst } },
    intoSourceCluster: true,
  });
  const { dryRun } = await dryRunStored(store, admin, plan.id);
  const v = dryRun.verdicts.find(x => x.ref.name === "app-config")!;
  expect(v.verdict).toBe("conflict");
  expect(v.conflicts).toEqual([
    expect.objectContaining({ manager: "other-team", field: ".data.a" }),
  ]);
  expect(dryRun.ok).toBe(false);
  await approve(plan.id);
  await expect(applyStored(store, admin, plan.id, { confirm: true })).rejects.toThrow(
    /not ok \(1 conflicts/,
  );
  const live = await call<Obj>(`/api/v1/namespaces/${dst}/configmaps/app-config`);
  expect(live.data).toEqual({ a: "theirs" });
});

it("gives a rejected verdict with the server's message when admission refuses an object", async () => {
  const dst = `rrej-${hex}`;
  await ensureNamespace(admin, dst, { "krply-test-deny": hex });
  const policy = `krply-test-deny-${hex}`;
  await call("/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies", "POST", {
    metadata: { name: policy },
    spec: {
      failurePolicy: "Fail",
      matchConstraints: {
        resourceRules: [
          {
            apiGroups: [""],
            apiVersions: ["v1"],
            operations: ["CREATE", "UPDATE"],
            resources: ["configmaps"],
          },
        ],
      },
      validations: [
        {
          expression: "!has(object.data) || !('mode' in object.data)",
          message: "mode is decided by the platform team here",
        },
      ],
    },
  });
  await call("/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings", "POST", {
    metadata: { name: policy },
    spec: {
      policyName: policy,
      validationActions: ["Deny"],
      matchResources: { namespaceSelector: { matchLabels: { "krply-test-deny": hex } } },
    },
  });
  try {
    const { plan } = await createPlan(view(), store, admin, {
      at: T,
      sourceNamespaces: [src],
      policy: { namespaceMap: { [src]: dst } },
      intoSourceCluster: true,
    });
    // A new policy takes a moment to be enforced.
    let dryRun = (await dryRunStored(store, admin, plan.id)).dryRun;
    for (let i = 0; i < 100 && !dryRun.verdicts.some(v => v.verdict === "rejected"); i++) {
      await new Promise(r => setTimeout(r, 300));
      dryRun = (await dryRunStored(store, admin, plan.id)).dryRun;
    }
    const v = dryRun.verdicts.find(x => x.ref.name === "app-config")!;
    expect(v.verdict).toBe("rejected");
    expect(v.message).toContain("mode is decided by the platform team here");
    expect(dryRun.verdicts.find(x => x.ref.name === "sentinel")!.verdict).toBe("would-create");
    expect(dryRun.ok).toBe(false);
  } finally {
    await call(
      `/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings/${policy}`,
      "DELETE",
    );
    await call(
      `/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/${policy}`,
      "DELETE",
    );
  }
});

/** Runs the krply CLI in-process and returns what it printed. */
async function krply(...args: string[]): Promise<{ out: string; code: number }> {
  let out = "";
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string) => {
    out += chunk;
    return true;
  }) as typeof process.stdout.write;
  const before = process.exitCode;
  process.exitCode = 0;
  try {
    await runCli(["node", "krply", "--store", tmp.path, ...args]);
  } finally {
    process.stdout.write = write;
  }
  const code = Number(process.exitCode ?? 0);
  process.exitCode = before;
  return { out, code };
}

it("krply replay show prints the table, and -o yaml the exact manifests; dry-run prints verdicts", async () => {
  const plan = firstPlan!;
  const table = await krply("replay", "show", plan.id);
  expect(table.out).toContain(`plan ${plan.id}`);
  expect(table.out).toMatch(/ConfigMap\s+rdst-\w+\/app-config/);
  expect(table.out).toContain("UNCHANGED");
  const yaml = await krply("-o", "yaml", "replay", "show", plan.id);
  const docs = yaml.out.split(/^---$/m).map(d => parse(d) as Obj);
  expect(docs).toEqual(plan.objects.map(o => o.manifest));
  const dry = await krply("replay", "dry-run", plan.id, "--kubeconfig", api.kubeconfigs.admin);
  expect(dry.code).toBe(0);
  expect(dry.out).toContain("DRY-RUN-OK");
});

it("serves the replay routes, each authorized by a SubjectAccessReview on replayplans", async () => {
  const reviews = await clusterReviewApi({ kubeconfig: api.kubeconfigs.admin });
  const server = await startApiServer(
    testServerOptions(tmp.path, {
      authorizer: kubernetesAuthorizer({ api: reviews.api }),
      routes: replayRoutes({ target: () => Promise.resolve(admin) }),
    }),
  );
  const dst = `rapi-${hex}`;
  const call = async (user: "admin" | "nobody", method: string, path: string, body?: unknown) => {
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${api.tokens[user]}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return {
      status: res.status,
      body: (await res.json()) as {
        data: Obj & { id: string; ok: boolean };
        error?: { message: string };
      },
    };
  };
  try {
    const request = {
      at: T,
      namespaces: [src],
      namespaceMap: { [src]: dst },
      intoSourceCluster: true,
    };
    expect((await call("nobody", "POST", "/v1/replay-plans", request)).status).toBe(403);
    expect((await call("nobody", "GET", "/v1/replay-plans")).status).toBe(403);
    const made = await call("admin", "POST", "/v1/replay-plans", request);
    expect(made.status).toBe(201);
    const id = made.body.data.id;
    expect((await call("nobody", "POST", `/v1/replay-plans/${id}/dry-run`, {})).status).toBe(403);
    const dry = await call("admin", "POST", `/v1/replay-plans/${id}/dry-run`, {});
    expect(dry.status).toBe(200);
    expect(dry.body.data.ok).toBe(true);
    const list = await call("admin", "GET", "/v1/replay-plans");
    expect((list.body.data as unknown as { id: string }[]).map(p => p.id)).toContain(id);
    expect(
      (await call("nobody", "POST", "/v1/replay-runs", { plan: id, confirm: true })).status,
    ).toBe(403);
    const refused = await call("admin", "POST", "/v1/replay-runs", { plan: id, confirm: true });
    expect(refused.status).toBe(422);
    expect(refused.body.error!.message).toMatch(/not approved/);
    // The approval route reads the ReplayPlan parts from the cluster: not approved, then approved.
    const pending = await call("admin", "GET", `/v1/replay-plans/${id}/approval`);
    expect(pending.status).toBe(200);
    expect(pending.body.data).toMatchObject({
      approved: false,
      problem: expect.stringMatching(/not approved/),
    });
    expect((await call("nobody", "GET", `/v1/replay-plans/${id}/approval`)).status).toBe(403);
    await approve(id);
    const approved = await call("admin", "GET", `/v1/replay-plans/${id}/approval`);
    expect(approved.body.data).toMatchObject({ approved: true, problem: null });
    expect(approved.body.data.parts).toEqual([
      expect.objectContaining({ approved: true, expired: false, approvedBy: "admin" }),
    ]);
    const run = await call("admin", "POST", "/v1/replay-runs", { plan: id, confirm: true });
    expect(run.status).toBe(201);
    expect(run.body.data.ok).toBe(true);
  } finally {
    await server.close();
    await reviews.close();
  }
});
