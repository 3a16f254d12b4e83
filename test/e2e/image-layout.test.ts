import { type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { assembleApp, buildStaleSources } from "../../deploy/image/assemble";
import {
  cannotEnterRoot,
  enterRoot,
  placeFile,
  placeVolume,
  prepareRoot,
  removeRoot,
} from "../../deploy/image/app-root";
import { chartCrds, watcherPodOf, type WatcherPod } from "../../deploy/image/chart-pod";
import {
  IMAGE_ENTRIES,
  IMAGE_ENV,
  IMAGE_UID,
  SQLITE_BINDING_PATH,
  WRITER_SCRIPT_PATH,
} from "../../deploy/image/layout";
import { JOURNAL_DIR, SIDECAR_NODE_FLAGS } from "../../deploy/finalize/objects";
import { peprPortAnswers } from "../../scripts/demo/module";
import { sharedApiServer } from "../apiserver/shared";
import { freePort } from "../support/net";
import { waitFor } from "../support/wait";

// The image without a container engine: the /app tree deploy/Dockerfile builds is assembled from the
// build output (deploy/image/assemble.ts), and the watcher pod's two containers start from it exactly
// as the chart runs them, as uid 65532 in a chroot, with in-cluster credentials for the harness API
// server. Only the host's Node (20, glibc) stands in for the image's (24, musl); the Dockerfile's
// build stage is what makes the addon fit the real one (deploy/image/layout.test.ts).

const root = join(__dirname, "..", "..");
const api = sharedApiServer();
const run = randomBytes(3).toString("hex");
const ns = `image-${run}`;
const STORE = "/apis/pepr.dev/v1/namespaces/pepr-system/peprstores/pepr-krply-store";

function expectOk(res: { status: number; text: string }): void {
  if (res.status >= 300) throw new Error(`HTTP ${res.status}: ${res.text}`);
}

describe("the image's /app tree runs the watcher pod against the real API server", () => {
  let rootfs: string;
  let pod: WatcherPod;
  let metricsPort: number;
  let apiPort: number;
  const procs: { name: string; child: ChildProcess; log: string }[] = [];
  const logs = () => procs.map(p => `--- ${p.name}\n${p.log.slice(-3000)}`).join("\n");
  const inCluster = {
    KUBERNETES_SERVICE_HOST: "127.0.0.1",
    KUBERNETES_SERVICE_PORT: String(api.apiserverPort),
    HOME: "/tmp",
  };

  function start(name: string, argv: string[], env: Record<string, string>): ChildProcess {
    const child = enterRoot(rootfs, argv, { env, binds: [join(root, "node_modules")] });
    const p = { name, child, log: "" };
    const keep = (b: Buffer) => (p.log = (p.log + b.toString()).slice(-100_000));
    child.stdout?.on("data", keep);
    child.stderr?.on("data", keep);
    procs.push(p);
    return child;
  }

  /** Runs the CLI from the tree, as `kubectl exec` into the sidecar would. */
  function cli(
    args: string[],
    env: Record<string, string>,
  ): Promise<{ code: number; out: string }> {
    const child = enterRoot(rootfs, ["node", IMAGE_ENTRIES.cli, ...args], {
      env,
      binds: [join(root, "node_modules")],
    });
    let out = "";
    child.stdout?.on("data", (b: Buffer) => (out += b.toString()));
    child.stderr?.on("data", (b: Buffer) => (out += b.toString()));
    return new Promise(resolve => child.once("exit", code => resolve({ code: code ?? -1, out })));
  }

  const sidecar = async (path: string) => {
    const res = await fetch(`http://127.0.0.1:${apiPort}${path}`, {
      headers: { authorization: `Bearer ${api.tokens.admin}` },
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  beforeAll(async () => {
    const why = cannotEnterRoot();
    if (why) throw new Error(`the image layout test cannot run here: ${why}`);
    if (await peprPortAnswers())
      throw new Error("port 3000 is taken (another Pepr module?); Pepr's controller needs it");
    buildStaleSources(root);
    pod = watcherPodOf(join(root, "dist", "krply-chart"));
    expect(pod.watcher.argv).toEqual(["node", IMAGE_ENTRIES.controller, pod.hash]);
    // The sidecar runs with the node flags the chart gives it (a smaller young generation).
    expect(pod.sidecar.argv).toEqual(["node", ...SIDECAR_NODE_FLAGS, IMAGE_ENTRIES.sidecar]);

    rootfs = mkdtempSync(join(tmpdir(), "krply-image-"));
    prepareRoot(rootfs);
    assembleApp({ root, rootfs, baseNodeModules: join(root, "node_modules"), chown: true });
    // The pod's mounts: the module Secret, the TLS Secret, the digest key, the journal's volume, and
    // the service account (the admin token stands in for the chart's RBAC, which other tests check).
    placeFile(rootfs, `/app/load/${pod.module.file}`, pod.module.gz);
    placeFile(rootfs, "/etc/certs/tls.crt", pod.tls.crt);
    placeFile(rootfs, "/etc/certs/tls.key", pod.tls.key);
    placeFile(rootfs, "/etc/krply/digest-key/key", randomBytes(24).toString("hex"));
    placeVolume(rootfs, "/var/lib/krply");
    const sa = "/var/run/secrets/kubernetes.io/serviceaccount";
    placeFile(rootfs, `${sa}/token`, api.tokens.admin);
    placeFile(rootfs, `${sa}/ca.crt`, readFileSync(api.caFile));
    placeFile(rootfs, `${sa}/namespace`, "pepr-system");

    // What `helm install -n pepr-system` provides before the pod starts.
    for (const name of ["pepr-system", ns]) {
      const res = await api.request("admin", "POST", "/api/v1/namespaces", { metadata: { name } });
      if (res.status !== 409) expectOk(res);
    }

    // The chart's CRDs (ReplayPlan, Pepr's Store), applied as `helm install` applies them.
    const crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    for (const crd of chartCrds(join(root, "dist", "krply-chart"))) {
      expectOk(
        await api.request(
          "admin",
          "PATCH",
          `${crds}/${crd.name}?fieldManager=krply-e2e&force=true`,
          crd.yaml,
        ),
      );
      await waitFor(
        `CRD ${crd.name} established`,
        async () => {
          const res = await api.request("admin", "GET", `${crds}/${crd.name}`);
          const conditions = res.json<{
            status?: { conditions?: { type: string; status: string }[] };
          }>().status?.conditions;
          return conditions?.some(c => c.type === "Established" && c.status === "True")
            ? true
            : undefined;
        },
        30_000,
        logs,
      );
    }

    metricsPort = await freePort();
    apiPort = await freePort();
    // The chart's environment, with the image's, and loopback addresses on free ports instead of
    // 0.0.0.0:9464 and :8080; recording is narrowed to this test's namespace (a values setting).
    start("watcher", pod.watcher.argv, {
      ...pod.watcher.env,
      ...IMAGE_ENV,
      ...inCluster,
      KRPLY_NAMESPACES: ns,
      // A values setting: appends commit on the writer thread from the start, not only in a big
      // cluster, so this small one shows that the image's recorder can start it.
      KRPLY_WRITER_THREAD: "on",
      KRPLY_METRICS_HOST: "127.0.0.1",
      KRPLY_METRICS_PORT: String(metricsPort),
    });
  }, 900_000);

  /**
   * The sidecar container. It exits while the journal does not exist yet (the recorder creates it),
   * and the kubelet would restart it; the test starts it once the journal is there instead.
   */
  async function startSidecar(): Promise<void> {
    if (procs.some(p => p.name === "sidecar")) return;
    start("sidecar", pod.sidecar.argv, {
      ...pod.sidecar.env,
      ...IMAGE_ENV,
      ...inCluster,
      KRPLY_API_HOST: "127.0.0.1",
      KRPLY_API_PORT: String(apiPort),
    });
    await waitFor(
      "the sidecar to listen",
      async () => ((await fetch(`http://127.0.0.1:${apiPort}/v1/health`)).ok ? true : undefined),
      60_000,
      logs,
    );
  }

  afterAll(async () => {
    for (const { child } of procs) {
      if (!child.pid || child.exitCode !== null) continue;
      const exited = new Promise(r => child.once("exit", r));
      process.kill(-child.pid, "SIGTERM");
      const timer = setTimeout(() => child.pid && process.kill(-child.pid, "SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    }
    // The Store mirrors this journal's watermarks; a later module must not compare its journal to them.
    await api.request("admin", "DELETE", STORE);
    await api.request("admin", "DELETE", `/api/v1/namespaces/${ns}`);
    // The processes' output, for a failure's post-mortem (test-results/ is not committed).
    const out = join(root, "test-results", `image-layout-${run}`);
    mkdirSync(out, { recursive: true });
    for (const p of procs) writeFileSync(join(out, `${p.name}.log`), p.log);
    if (rootfs) removeRoot(rootfs);
  }, 60_000);

  it("starts the controller, which unpacks and forks the module, as uid 65532; the recorder turns ready", async () => {
    const health = await waitFor(
      "the recorder's /readyz to answer 200",
      async () => {
        const res = await fetch(`http://127.0.0.1:${metricsPort}/readyz`);
        return res.status === 200 ? ((await res.json()) as { state: string }) : undefined;
      },
      90_000,
      logs,
    );
    expect(health.state).toBe("running");
    // The controller wrote the unpacked module into /app, which only the image's user may do.
    expect(statSync(join(rootfs, "app", `module-${pod.hash}.js`)).uid).toBe(IMAGE_UID);
    const status = readFileSync(`/proc/${procs[0].child.pid}/status`, "utf8");
    expect(status).toMatch(new RegExp(`^Uid:\\s+${IMAGE_UID}\\s`, "m"));
    const journal = statSync(join(rootfs, "var", "lib", "krply", "journal.db"));
    expect(journal.uid).toBe(IMAGE_UID);
    await startSidecar();
  });

  it("records ConfigMap changes and the sidecar answers for them from the same journal", async () => {
    await startSidecar();
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    const cm = (v: string) => ({ metadata: { name: "shop" }, data: { v } });
    expectOk(await api.request("admin", "POST", path, cm("1")));
    expectOk(await api.request("admin", "PUT", `${path}/shop`, cm("2")));
    const history = await waitFor(
      "the sidecar to answer both versions",
      async () => {
        const res = await sidecar(`/v1/objects/ConfigMap/shop/history?namespace=${ns}`);
        const entries = (res.body.data as { entries?: { kind: string }[] } | undefined)?.entries;
        return res.status === 200 &&
          entries &&
          entries.filter(e => e.kind === "version").length >= 2
          ? res.body
          : undefined;
      },
      60_000,
      logs,
    );
    expect(JSON.stringify(history)).toContain(ns);
    const streams = await sidecar("/v1/streams");
    expect(streams.status).toBe(200);
    const list = JSON.stringify(streams.body);
    expect(list).toContain(`configmaps`);
    expect(list).toContain(ns);
    const object = await sidecar(`/v1/objects/ConfigMap/shop?namespace=${ns}`);
    expect(object.status).toBe(200);
    expect(JSON.stringify(object.body)).toContain('"v":"2"');
  });

  it("commits the recorder's appends on the journal's writer thread, from the script the image names", async () => {
    // The module runs from /app, where Pepr's controller unpacked it; no script sits beside it.
    expect(existsSync(join(rootfs, WRITER_SCRIPT_PATH))).toBe(true);
    expect(existsSync(join(rootfs, "app", "writer-worker.js"))).toBe(false);
    expect(IMAGE_ENV.KRPLY_WRITER_SCRIPT).toBe(WRITER_SCRIPT_PATH);
    const res = await fetch(`http://127.0.0.1:${metricsPort}/readyz`);
    const health = (await res.json()) as { journal: { writerThread: unknown } };
    // The ConfigMap changes of the test before were appended through it.
    expect(health.journal.writerThread).toEqual({ state: "running" });
    await waitFor(
      "the writer thread's gauge",
      async () => {
        const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
        return /^krply_journal_writer_thread\{state="running"\} 1$/m.test(text) ? true : undefined;
      },
      30_000,
      logs,
    );
  });

  it("runs the CLI from the tree on the journal, and nothing opens it without the image's addon", async () => {
    // The chart's journal path, as the watcher and sidecar containers get it.
    const store = ["--store", join(JOURNAL_DIR, "journal.db"), "-o", "json"];
    const ok = await cli([...store, "timeline", "cm/shop", "-n", ns], {
      ...IMAGE_ENV,
      HOME: "/tmp",
    });
    expect(ok.code).toBe(0);
    // The update recorded by the watcher: data.v from "1" to "2".
    expect(ok.out).toMatch(/"path": "data\.v",[\s\S]*?"before": "1",\s*"after": "2"/);
    // /app/node_modules/better-sqlite3 holds no addon of its own: only KRPLY_SQLITE_BINDING loads one.
    expect(existsSync(join(rootfs, SQLITE_BINDING_PATH))).toBe(true);
    expect(existsSync(join(rootfs, "app", "node_modules", "better-sqlite3", "build"))).toBe(false);
    const bare = await cli([...store, "timeline", "cm/shop", "-n", ns], { HOME: "/tmp" });
    expect(bare.code).not.toBe(0);
    expect(bare.out).toMatch(/bindings|better_sqlite3\.node/i);
  });
});
