import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { sharedApiServer } from "../apiserver/shared";
import type { KubeObject, KubeResponse } from "../apiserver/rest";
import type { ApiServerUser } from "../apiserver/types";
import type { KubeClient } from "../../src/kube/client";
import {
  REPLAY_PLANS_PATH,
  applyPlan,
  dryRunPlan,
  fieldManagerOf,
  newPlanId,
  planDigest,
  publishPlan,
  replayPlanParts,
  type Plan,
  type ReplayPlan,
} from "../../src/replay";
import { clusterIdentity } from "../../src/watch/cluster-identity";
import { stopGroup } from "../../scripts/demo/children";
import {
  PEPR_WEBHOOK_PATHS,
  peprPortAnswers,
  removeStage,
  stageModule,
} from "../../scripts/demo/module";
import { acquirePeprDevLock } from "../support/pepr-dev-lock";
import { clusterRoleGrant } from "../support/rbac";
import { waitFor } from "../support/wait";
import { clientOf } from "../support/replay-fixtures";

// The full loop with the real module: `pepr dev` runs every capability in one process on this machine,
// registers its webhooks with the harness API server, and the API server calls them back over loopback.
// Approvals live 20 s here so that expiry is seen inside the test.

const root = join(__dirname, "..", "..");
const TTL_SECONDS = 20;
/**
 * The webhook host. Pepr's dev certificate names the host as a DNS SAN only, and Go (the API server)
 * matches an IP address against IP SANs only; so https://127.0.0.1 fails TLS verification and the
 * loopback name is used instead. Both stay on this machine.
 */
const WEBHOOK_HOST = process.env.KRPLY_E2E_WEBHOOK_HOST ?? "localhost";
const api = sharedApiServer();

// Names are unique per run, so the test can run again against a kept harness.
const run = randomBytes(4).toString("hex");
const planId = `e2e-${run}`;
const app = `app-${run}`;
const web = `web-${run}`;
const ns = "replay-a";
const cmPath = (name: string, namespace = ns) =>
  `/api/v1/namespaces/${namespace}/configmaps/${name}`;
const deployPath = (name: string) => `/apis/apps/v1/namespaces/${ns}/deployments/${name}`;
const planPath = `${REPLAY_PLANS_PATH}/${planId}`;
const manager = `krply-plan-${planId}`;

function configMap(name: string, labels: Record<string, string>, namespace = ns): object {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace, labels },
    data: { replayed: "yes" },
  };
}

function deployment(name: string, labels: Record<string, string>): object {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace: ns, labels },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: "web", image: "registry.invalid/web:1" }] },
      },
    },
  };
}

/** A server-side apply as the replayer, the way the planner's apply writes: never forced. */
function apply(path: string, body: object, fieldManager: string, user: ApiServerUser = "replayer") {
  return api.request(
    user,
    "PATCH",
    `${path}?fieldManager=${encodeURIComponent(fieldManager)}&force=false`,
    JSON.stringify(body),
  );
}

const labelled = { "krply.dev/plan": planId };

function expectDenied(res: KubeResponse, message: string | RegExp): void {
  if (res.status < 400) throw new Error(`expected a denial, got HTTP ${res.status}: ${res.text}`);
  const status = res.json<{ message?: string }>();
  expect(status.message).toContain('admission webhook "pepr-krply.pepr.dev" denied the request');
  if (typeof message === "string") expect(status.message).toContain(message);
  else expect(status.message).toMatch(message);
}

function expectOk(res: KubeResponse): void {
  if (res.status >= 300) throw new Error(`expected success, got HTTP ${res.status}: ${res.text}`);
}

async function getPlan(): Promise<ReplayPlan> {
  const res = await api.request("admin", "GET", planPath);
  expectOk(res);
  return res.json<ReplayPlan>();
}

// Staged outside the worktree's sources: `pepr dev` lints and type-checks the folder it runs in
// (scripts/demo/module.ts stageModule); its dist/ and TLS files stay out of the worktree too.
const stage = join(root, "test-results", `pepr-dev-${run}`);

let dev: ChildProcess | undefined;
let devLog = "";

/**
 * Ends `pepr dev` and takes its webhooks off the shared API server. Under pepr dev they have failurePolicy
 * Fail and no objectSelector, so a configuration left behind (or one the API server still calls) would
 * refuse every later core or apps write of the test files that follow.
 */
async function stopDev(): Promise<void> {
  // The configurations go first, while the module still answers: no write meets a dead webhook.
  for (const path of PEPR_WEBHOOK_PATHS) {
    await waitFor(`DELETE ${path} to answer 200 or 404`, async () => {
      const res = await api.request("admin", "DELETE", path);
      if (res.status === 200 || res.status === 404) return true;
      throw new Error(`HTTP ${res.status}: ${res.text}`);
    });
  }
  const child = dev;
  dev = undefined;
  // pepr dev forks the module (and esbuild); its own process group holds them all, and all of them end.
  if (child?.pid) await stopGroup(child.pid, 10_000);
  // The API server learns of the deletion from a watch: once a write passes with the module gone, it no
  // longer calls the webhooks.
  await waitFor("a core write to pass with pepr dev stopped", async () => {
    const res = await api.request(
      "admin",
      "POST",
      `/api/v1/namespaces/${ns}/configmaps?dryRun=All`,
      configMap("after-pepr-dev", {}),
    );
    if (res.status === 201) return true;
    throw new Error(`HTTP ${res.status}: ${res.text}`);
  });
}

let releaseLock: (() => void) | undefined;

beforeAll(async () => {
  // test/e2e/demo.test.ts runs pepr dev too, on the same port and webhook names: take turns.
  releaseLock = await acquirePeprDevLock();
  if (await peprPortAnswers()) {
    throw new Error(
      "port 3000 is taken (another `pepr dev`?); the module's webhook server needs it",
    );
  }
  const crd = parse(readFileSync(join(root, "deploy", "crds", "replayplan.yaml"), "utf8"));
  expectOk(
    await api.request(
      "admin",
      "PATCH",
      "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/replayplans.krply.dev?fieldManager=krply-e2e&force=true",
      JSON.stringify(crd),
    ),
  );
  await waitFor("the ReplayPlan CRD to be served", async () =>
    (await api.request("admin", "GET", REPLAY_PLANS_PATH)).status === 200 ? true : undefined,
  );
  // The replayer may create and update plans (so it can be a creator); nobody has no rights on them.
  const planAuthor = {
    apiGroups: ["krply.dev"],
    resources: ["replayplans"],
    verbs: ["get", "list", "create", "update", "patch"],
  };
  for (const o of clusterRoleGrant("krply-e2e-plan-author", [planAuthor], "replayer")) {
    const query = "?fieldManager=krply-e2e&force=true";
    expectOk(await api.request("admin", "PATCH", `${o.path}${query}`, JSON.stringify(o.body)));
  }

  stageModule(root, stage);
  dev = spawn(
    join(root, "node_modules", ".bin", "pepr"),
    ["dev", "--host", WEBHOOK_HOST, "--yes"],
    {
      cwd: stage,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        ...process.env,
        KUBECONFIG: api.kubeconfigs.admin,
        LOG_LEVEL: "info",
        KRPLY_LOG_LEVEL: "info",
        // The recorder runs in dev mode too; give it a throwaway journal and one quiet resource.
        KRPLY_JOURNAL: join(api.dataDir, `gate-e2e-${planId}.db`),
        KRPLY_RESOURCES: "runtimeclasses",
        KRPLY_APPROVAL_TTL_SECONDS: String(TTL_SECONDS),
        KRPLY_APPROVAL_TWO_PERSON: "true",
        KRPLY_GATE_CACHE_MS: "1000",
        // pepr dev cannot add the chart's objectSelector, so a webhook on every group would also
        // catch Pepr's own CRD apply before the module serves; the groups under test are enough.
        KRPLY_GATE_GROUPS: "core,apps",
      },
    },
  );
  const keep = (chunk: Buffer) => (devLog = (devLog + chunk.toString()).slice(-200_000));
  dev.stdout?.on("data", keep);
  dev.stderr?.on("data", keep);
  try {
    await waitFor(
      "pepr dev to serve its webhooks",
      async () => ((await peprPortAnswers()) ? true : undefined),
      240_000,
    );
    // The server answers before its admission routes are mounted, so readiness is a dry run that
    // passes through both webhooks: a ReplayPlan (Mutate + Validate) and a labelled ConfigMap (gate).
    await waitFor(
      "the module's webhooks to answer",
      async () => {
        const [probe] = replayPlanParts({
          planId: "readiness-probe",
          digest: `sha256:${"0".repeat(64)}`,
          source: { cluster: "probe" },
          target: { cluster: "probe", namespaces: [ns] },
          objects: [],
        });
        const plan = await api.request("admin", "POST", `${REPLAY_PLANS_PATH}?dryRun=All`, probe);
        const cm = await api.request(
          "replayer",
          "POST",
          `/api/v1/namespaces/${ns}/configmaps?dryRun=All`,
          configMap("readiness-probe", { "krply.dev/plan": "readiness-probe" }),
        );
        return plan.status === 201 && cm.status === 201 ? true : undefined;
      },
      120_000,
    );
  } catch (err) {
    throw new Error(`${String(err)}\n--- pepr dev output ---\n${devLog}`, { cause: err });
  }
}, 900_000);

afterAll(async () => {
  await stopDev();
  releaseLock?.();
  // The module's own log, for a failure's post-mortem (test-results/ is git-ignored).
  mkdirSync(join(root, "test-results"), { recursive: true });
  writeFileSync(join(root, "test-results", "replay-gate-pepr-dev.log"), devLog);
  removeStage(stage);
}, 60_000);

describe("the replay gate and RBAC-governed approval, with the real module under pepr dev", () => {
  const objects = [
    { apiVersion: "v1", kind: "ConfigMap", namespace: ns, name: app },
    { apiVersion: "apps/v1", kind: "Deployment", namespace: ns, name: web },
  ];

  it("stamps the creator from the request's user and writes status planned", async () => {
    const kube = await api.request("admin", "GET", "/api/v1/namespaces/kube-system");
    const uid = kube.json<KubeObject>().metadata?.uid as string;
    const [part] = replayPlanParts({
      planId,
      digest: `sha256:${"e".repeat(64)}`,
      source: { cluster: `127.0.0.1:1~${uid}`, namespaces: ["shop"] },
      target: { cluster: `${new URL(api.url).host}~${uid}`, namespaces: [ns] },
      objects,
    });
    // A self-declared creator is refused by name.
    expectDenied(
      await api.request("replayer", "POST", REPLAY_PLANS_PATH, {
        ...part,
        spec: { ...part.spec, createdBy: "admin" },
      }),
      'spec.createdBy is stamped from the requesting user: it must be "replayer", not "admin"',
    );
    expectOk(await api.request("replayer", "POST", REPLAY_PLANS_PATH, part));
    const plan = await getPlan();
    expect(plan.spec.createdBy).toBe("replayer");
    expect(plan.metadata.labels).toEqual({ "krply.dev/plan-id": planId });
    const status = await waitFor("the watcher to write status", async () => {
      const s = (await getPlan()).status;
      return s?.state ? s : undefined;
    });
    expect(status).toMatchObject({
      state: "planned",
      part: "1/1",
      target: ns,
      counts: { objects: 2 },
    });
  });

  it("denies a labelled write of an unapproved plan and admits unlabelled writes", async () => {
    expectDenied(
      await apply(cmPath(app), configMap(app, labelled), manager),
      `krply replay gate denied CREATE of ConfigMap ${ns}/${app} (plan ${planId}): the plan has not been approved`,
    );
    // D5: a write without the label never depends on the plan.
    expectOk(await apply(cmPath("unrelated"), configMap("unrelated", {}), "kubectl"));
    // A dry run persists nothing, so the planner may dry-run before approval.
    expectOk(
      await api.request(
        "replayer",
        "PATCH",
        `${cmPath(app)}?fieldManager=${manager}&force=false&dryRun=All`,
        JSON.stringify(configMap(app, labelled)),
      ),
    );
  });

  it("lets only users whom RBAC allows approve, and never as someone else", async () => {
    const approve = (user: ApiServerUser, extra: object = {}) =>
      api.request("nobody" === user ? "nobody" : user, "PATCH", planPath, {
        spec: { approved: true, ...extra },
      });
    const forbidden = await approve("nobody");
    expect(forbidden.status).toBe(403);
    expect(forbidden.json<{ message: string }>().message).toContain(
      'User "nobody" cannot patch resource "replayplans"',
    );
    expectDenied(
      await approve("admin", { approvedBy: "replayer" }),
      '"admin" cannot approve as "replayer"',
    );
    expectDenied(
      await approve("replayer"),
      "two-person rule: replayer created this plan and cannot also approve it",
    );
    expect((await getPlan()).spec.approved).toBe(false);
  });

  it("applies an approved plan, in every API group, and nothing else", async () => {
    const before = Date.now();
    expectOk(await api.request("admin", "PATCH", planPath, { spec: { approved: true } }));
    const plan = await getPlan();
    expect(plan.spec).toMatchObject({ approved: true, approvedBy: "admin", createdBy: "replayer" });
    const expires = Date.parse(plan.spec.approvalExpiresAt!);
    expect(expires - Date.parse(plan.spec.approvedAt!)).toBe(TTL_SECONDS * 1000);
    expect(Date.parse(plan.spec.approvedAt!)).toBeGreaterThanOrEqual(before - 5000);

    expectDenied(
      await apply(cmPath(app), configMap(app, labelled), "kubectl"),
      `the field manager must be ${manager}, got kubectl`,
    );
    expectDenied(
      await apply(deployPath(web), deployment(web, labelled), "kubectl"),
      `krply replay gate denied CREATE of Deployment ${ns}/${web} (plan ${planId}): the field manager must be ${manager}`,
    );
    expectDenied(
      await apply(cmPath("other"), configMap("other", labelled), manager),
      `ConfigMap ${ns}/other is not in the plan`,
    );
    expectDenied(
      await apply(cmPath(app, "replay-b"), configMap(app, labelled, "replay-b"), manager),
      `namespace replay-b is not a target of the plan (targets: ${ns})`,
    );
    // An approved plan changes only by revoking its approval.
    expectDenied(
      await api.request("admin", "PATCH", planPath, { spec: { objects: [] } }),
      "the plan is approved; the only change allowed is revoking the approval",
    );

    const cm = await apply(cmPath(app), configMap(app, labelled), manager);
    expectOk(cm);
    expect(cm.status).toBe(201);
    expectOk(await apply(deployPath(web), deployment(web, labelled), manager));
    const live = (await api.request("admin", "GET", cmPath(app))).json<KubeObject>();
    expect((live.metadata?.managedFields as { manager: string }[]).map(f => f.manager)).toEqual([
      manager,
    ]);

    const status = await waitFor("status approved", async () => {
      const s = (await getPlan()).status;
      return s?.state === "approved" ? s : undefined;
    });
    expect(status.message).toContain("approved by admin until");
    expect(Date.now()).toBeLessThan(expires);
  });

  it("denies writes after the approval expires, and the watcher revokes it", async () => {
    const plan = await getPlan();
    const expires = Date.parse(plan.spec.approvalExpiresAt ?? new Date().toISOString());
    await new Promise(r => setTimeout(r, Math.max(0, expires - Date.now()) + 100));
    // Whether the watcher has revoked it yet or not, the write is refused.
    expectDenied(
      await apply(cmPath(app), configMap(app, labelled), manager),
      new RegExp(
        `krply replay gate denied UPDATE of ConfigMap ${ns}/${app} \\(plan ${planId}\\): ` +
          "(the approval by admin expired at|the plan has not been approved)",
      ),
    );
    const revoked = await waitFor("the watcher to revoke the expired approval", async () => {
      const p = await getPlan();
      // The revocation's own reconcile rewrites the message once the approval is gone.
      return p.spec.approved === false && p.status?.message?.includes("approve again")
        ? p
        : undefined;
    });
    expect(revoked.spec.approvedBy).toBeUndefined();
    expect(revoked.status?.expiredApproval).toMatchObject({ approvedBy: "admin" });
    expect(revoked.status?.state).toBe("expired");
    // Once the gate's short cache (1 s here) has passed, it sees the revocation itself.
    await new Promise(r => setTimeout(r, 1100));
    expectDenied(
      await apply(cmPath(app), configMap(app, labelled), manager),
      "the plan has not been approved",
    );
  });
});

describe("the planner's publish, dry run and apply through the gate", () => {
  let admin: KubeClient;
  let replayer: KubeClient;

  beforeAll(async () => {
    admin = await clientOf(api.kubeconfigs.admin);
    replayer = await clientOf(api.kubeconfigs.replayer);
  });

  afterAll(async () => {
    await Promise.all([admin?.close(), replayer?.close()]);
  });

  it("publishes a plan, dry-runs it before approval, and applies it once approved", async () => {
    const id = newPlanId();
    const name = `planned-${run}`;
    const target = await clusterIdentity(admin);
    const now = new Date().toISOString();
    const body: Omit<Plan, "digest"> = {
      id,
      createdAt: now,
      fieldManager: fieldManagerOf(id),
      source: {
        clusterId: "127.0.0.1:1~source-uid",
        at: now,
        snapshotId: null,
        namespaces: ["shop"],
      },
      target: { clusterId: target.clusterId, isSource: false },
      namespaceMap: { shop: ns },
      targetNamespaces: [ns],
      policy: {},
      coverageComplete: true,
      objects: [
        {
          ref: {
            group: "",
            version: "v1",
            kind: "ConfigMap",
            resource: "configmaps",
            namespace: ns,
            name,
          },
          source: { namespace: "shop", name, resourceVersion: "1" },
          rank: 2,
          manifest: configMap(name, { "krply.dev/plan": id }) as Record<string, unknown>,
          warnings: [],
        },
      ],
      excluded: [],
      warnings: [],
    };
    const plan: Plan = { ...body, digest: planDigest(body) };

    const [part] = await publishPlan(replayer, plan);
    expect(part.spec.createdBy).toBe("replayer");
    const dryRun = await dryRunPlan(replayer, plan, { skipPreflight: true });
    expect(dryRun.ok).toBe(true);
    expect(dryRun.verdicts.map(v => v.verdict)).toEqual(["would-create"]);
    await expect(applyPlan(admin, plan, dryRun, { confirm: true })).rejects.toThrow(/not approved/);

    expectOk(
      await api.request("admin", "PATCH", `${REPLAY_PLANS_PATH}/${id}`, {
        spec: { approved: true },
      }),
    );
    const result = await applyPlan(admin, plan, dryRun, { confirm: true });
    expect(result).toMatchObject({ ok: true, applied: 1, notApplied: 0 });
    expect(result.items.map(i => i.result)).toEqual(["created"]);
    const live = (await api.request("admin", "GET", cmPath(name))).json<KubeObject>();
    expect((live.metadata?.managedFields as { manager: string }[]).map(f => f.manager)).toEqual([
      fieldManagerOf(id),
    ]);
  });
});
