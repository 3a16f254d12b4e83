// The finalized chart installed into the real API server with no admission pod running (the harness has no
// kubelet), as happens when krply's pods are down. The webhook names the Service pepr-krply.pepr-system.svc;
// the harness's egress proxy has no local port for it, so the API server's call is refused on loopback at
// once, exactly like a Service with no ready endpoints. Only writes that carry the plan label may feel that.
import { execFile, execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { kubeRequest, startApiServer, type ApiServer } from "../apiserver";
import { ensureHelm } from "../helm/build";
import { PLAN_LABEL } from "../../deploy/finalize";

const root = join(__dirname, "..", "..");
const WEBHOOK_SERVICE = "pepr-krply.pepr-system.svc:443";

let api: ApiServer;
let out = "";

/**
 * `npm run build:module` into a folder of its own: build.test.ts builds dist/ in the same jest run, and
 * two builds writing one folder would race. The folder is inside the repository because pepr loads the
 * built module to render the chart, and that module must resolve `pepr` from node_modules.
 */
async function buildChart(dir: string): Promise<string> {
  const image = process.env.KRPLY_IMAGE ?? "ghcr.io/krply/krply:0.1.0";
  // Asynchronous, so the API server starts while pepr type-checks and bundles.
  const run = (cmd: string, args: string[]) =>
    promisify(execFile)(cmd, args, { cwd: root, timeout: 840_000, maxBuffer: 64 * 1024 * 1024 });
  const built = await run("npx", ["pepr", "build", "--custom-image", image, "-o", dir]);
  // pepr reports a failed type-check or module load and still exits 0, leaving no manifests behind.
  if (!existsSync(join(dir, "pepr-module-krply.yaml"))) {
    throw new Error(`pepr build wrote no manifests to ${dir}:\n${built.stdout}\n${built.stderr}`);
  }
  await run("npx", ["tsx", "deploy/finalize/index.ts", dir]);
  return join(dir, "krply-chart");
}

beforeAll(async () => {
  mkdirSync(join(root, ".cache"), { recursive: true });
  out = mkdtempSync(join(root, ".cache", "webhook-egress-"));
  const [chart, helm, server] = await Promise.all([
    buildChart(out),
    ensureHelm(),
    // Its own server: the shared e2e server runs `pepr dev`, whose webhook has the same name.
    startApiServer(),
  ]);
  api = server;
  execFileSync(
    helm,
    [
      "install",
      "krply",
      chart,
      "-n",
      "pepr-system",
      "--create-namespace",
      "--kubeconfig",
      api.kubeconfigs.admin,
    ],
    { stdio: "pipe", timeout: 120_000 },
  );
}, 900_000);

afterAll(async () => {
  await api?.dispose();
  if (out) rmSync(out, { recursive: true, force: true });
});

const create = (name: string, labels: Record<string, string>) =>
  kubeRequest(api.info, "admin", "POST", "/api/v1/namespaces/default/configmaps", {
    metadata: { name, labels },
    data: { a: "1" },
  });

describe("the installed chart with no admission pod", () => {
  it("denies a plan-labelled ConfigMap, and admits an unlabelled one without calling krply", async () => {
    // The API server loads a new webhook configuration asynchronously: repeat until the gate answers.
    const deadline = Date.now() + 30_000;
    let n = 0;
    let denied = await create(`labelled-${++n}`, { [PLAN_LABEL]: "plan-x" });
    while (denied.status < 400 && Date.now() < deadline) {
      await new Promise(done => setTimeout(done, 250));
      denied = await create(`labelled-${++n}`, { [PLAN_LABEL]: "plan-x" });
    }
    expect(denied.status).toBe(500);
    expect(denied.text).toContain('failed calling webhook \\"pepr-krply.pepr.dev\\"');
    expect(denied.text).toContain(`Service ${WEBHOOK_SERVICE} has no local port registered`);

    const log = await api.egress.log();
    const refused = log.events.filter(e => e.service === WEBHOOK_SERVICE);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.every(e => e.outcome === "refused")).toBe(true);
    // Nothing in this run reached anything but the proxy: no event was routed or passed through.
    expect(log.events.filter(e => e.outcome !== "refused")).toEqual([]);

    const last = log.events.at(-1)?.seq ?? 0;
    const admitted = await create("unlabelled", {});
    expect(admitted.status).toBe(201);
    expect((await api.egress.log(last)).events).toEqual([]);
  });
});
