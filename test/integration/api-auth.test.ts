// The built query sidecar in auth mode `kubernetes`, against the real API server's tokens: the token
// is checked with a TokenReview and each action with a SubjectAccessReview on krply.dev resources.
import { randomBytes } from "node:crypto";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sharedApiServer, type SharedApiServer } from "../apiserver/shared";
import { buildTools, startSidecar, type BuiltTools, type Sidecar } from "../support/built-cli";
import { writeCliJournal } from "../support/cli-journal";

const suffix = randomBytes(3).toString("hex");
const role = `krply-journal-reader-${suffix}`;
let api: SharedApiServer;
let tools: BuiltTools;
let sidecar: Sidecar;
let work: string;

const get = (path: string, token?: string) =>
  fetch(`${sidecar.url}${path}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });

const takeSnapshot = (token: string) =>
  fetch(`${sidecar.url}/v1/snapshots`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ record: false }),
  });

beforeAll(async () => {
  api = sharedApiServer();
  tools = buildTools({ api: true });
  work = mkdtempSync(join(tmpdir(), "krply-api-auth-"));
  chmodSync(work, 0o755);
  writeCliJournal(join(work, "journal.db"));
  // The sidecar asks the API server with the admin's credentials (it needs create on tokenreviews
  // and subjectaccessreviews, which system:auth-delegator grants in a cluster).
  sidecar = await startSidecar(tools, {
    KRPLY_JOURNAL: join(work, "journal.db"),
    KRPLY_API_AUTH: "kubernetes",
    KUBECONFIG: api.kubeconfigs.admin,
  });
  // `recorder` may get the journal, nothing else of krply.dev.
  const cr = await api.request("admin", "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name: role },
    rules: [{ apiGroups: ["krply.dev"], resources: ["journal"], verbs: ["get"] }],
  });
  expect(cr.status).toBe(201);
  const crb = await api.request(
    "admin",
    "POST",
    "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: role },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
      subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "recorder" }],
    },
  );
  expect(crb.status).toBe(201);
}, 120_000);

afterAll(async () => {
  await sidecar?.stop();
  await api?.request(
    "admin",
    "DELETE",
    `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${role}`,
  );
  await api?.request("admin", "DELETE", `/apis/rbac.authorization.k8s.io/v1/clusterroles/${role}`);
  tools?.cleanup();
  rmSync(work, { recursive: true, force: true });
});

test("no token: 401 in the one error shape", async () => {
  const res = await get("/v1/streams");
  expect(res.status).toBe(401);
  expect(await res.json()).toMatchObject({
    error: { status: 401, code: "unauthenticated", message: expect.stringMatching(/bearer token/) },
  });
  expect((await get("/v1/streams", "not-a-token")).status).toBe(401);
  // Health and readiness stay open for the kubelet.
  expect((await get("/v1/health")).status).toBe(200);
});

test("the nobody token: 403 on reads", async () => {
  const res = await get("/v1/streams", api.tokens.nobody);
  expect(res.status).toBe(403);
  expect(await res.json()).toMatchObject({
    error: { code: "forbidden", message: expect.stringMatching(/get journal\.krply\.dev/) },
  });
  expect(
    (await get("/v1/objects/deploy/web/history?namespace=shop", api.tokens.nobody)).status,
  ).toBe(403);
});

test("a token granted `journal` get reads, but cannot create snapshots", async () => {
  // RBAC takes effect within moments; a denial is cached only briefly.
  const deadline = Date.now() + 30_000;
  let res = await get("/v1/streams", api.tokens.recorder);
  while (res.status === 403 && Date.now() < deadline) {
    await new Promise(r => setTimeout(r, 500));
    res = await get("/v1/streams", api.tokens.recorder);
  }
  expect(res.status).toBe(200);
  expect(((await res.json()) as { data: unknown[] }).data.length).toBe(2);
  const history = await get("/v1/objects/deploy/web/history?namespace=shop", api.tokens.recorder);
  expect(history.status).toBe(200);

  const snap = await takeSnapshot(api.tokens.recorder);
  expect(snap.status).toBe(403);
  expect(await snap.json()).toMatchObject({
    error: { code: "forbidden", message: expect.stringMatching(/create snapshots\.krply\.dev/) },
  });
  // The admin (system:masters) may do both.
  expect((await takeSnapshot(api.tokens.admin)).status).toBe(200);
}, 60_000);

test("the CLI in remote mode: --token reads; a denied action and a missing token exit 7", () => {
  const read = tools.krply(["--server", sidecar.url, "--token", api.tokens.recorder, "coverage"]);
  expect(read.stderr).toBe("");
  expect(read.status).toBe(0);
  expect(read.stdout).toMatch(/deployments/);
  const denied = tools.krply(["--server", sidecar.url, "--token", api.tokens.recorder, "snapshot"]);
  expect(denied.status).toBe(7);
  expect(denied.stderr).toMatch(
    /^krply: server .*: user "recorder" may not create snapshots\.krply\.dev\n$/,
  );
  // KUBECONFIG points nowhere usable, so no token is sent.
  const none = tools.krply(["--server", sidecar.url, "status"], { KUBECONFIG: join(work, "none") });
  expect(none.status).toBe(7);
  expect(none.stderr).toMatch(/^krply: server .*: .*bearer token.*\n$/);
  // With the kubeconfig of a user, its token is used.
  const viaKubeconfig = tools.krply(["--server", sidecar.url, "status"], {
    KUBECONFIG: api.kubeconfigs.nobody,
  });
  expect(viaKubeconfig.status).toBe(7);
  expect(viaKubeconfig.stderr).toMatch(/may not get journal\.krply\.dev/);
});
