import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse, stringify } from "yaml";
import { streamIdOf } from "../../src/event";
import { KubeClient, loadKubeConfig } from "../../src/kube/client";
import { serveMetrics, type MetricsServer } from "../../src/metrics/serve";
import { clusterIdentity } from "../../src/watch/cluster-identity";
import { Recorder, type RecorderConfig } from "../../src/watch/recorder";
import { sharedApiServer } from "../apiserver/shared";
import { tempJournalPath } from "../support/journal-fixtures";
import { getOnce } from "../support/net";
import { cmKey, fastEngine } from "./recorder-support";
import { ensureNamespace } from "./recorder-workload";

// The watcher's readiness probe (GET /readyz on the metrics port) as the runtime wires it: the
// recorder's health, served next to /metrics, for a recorder that reads the real API server.

const api = sharedApiServer();
const run = randomBytes(3).toString("hex");
const ns = `readyz-${run}`;
/** A user of its own, impersonated by admin, so granting and revoking touches no shared user. */
const user = `krply-readyz-${run}`;
const rbac = "/apis/rbac.authorization.k8s.io/v1";
const binding = {
  metadata: { name: "readyz-read-cm" },
  roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "readyz-read-cm" },
  subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: user }],
};

type Health = {
  status: string;
  state: string;
  reasons: string[];
  journalOpenFailures: number;
  streams: { total: number; baselined: number; unavailable: string[] };
};

async function probe(
  server: MetricsServer,
  path = "/readyz",
): Promise<{ code: number; body: Health }> {
  const res = await getOnce(`http://127.0.0.1:${server.port}${path}`);
  return { code: res.status, body: JSON.parse(res.text) as Health };
}

/** krply_recorder_ready as a scraper reads it from /metrics on the same port. */
async function readyGauge(server: MetricsServer): Promise<number> {
  const { text } = await getOnce(`http://127.0.0.1:${server.port}/metrics`);
  const line = text.split("\n").find(l => l.startsWith("krply_recorder_ready "));
  if (!line) throw new Error("/metrics has no krply_recorder_ready");
  return Number(line.split(" ")[1]);
}

async function until<T>(
  what: string,
  check: () => Promise<T | undefined>,
  ms = 60_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise(r => setTimeout(r, 100));
  }
}

describe("the watcher's readiness endpoint against the real API server", () => {
  let admin: KubeClient;
  let kubeconfig: string;
  let clusterId: string;
  const tmp = tempJournalPath("krply-readyz-");
  const open: { recorder: Recorder; server: MetricsServer }[] = [];

  beforeAll(async () => {
    admin = await KubeClient.create(loadKubeConfig({ kubeconfig: api.kubeconfigs.admin }));
    clusterId = (await clusterIdentity(admin)).clusterId;
    await ensureNamespace(admin, ns);
    // The user reads kube-system (the cluster identity) and the ConfigMaps of one namespace.
    await admin.json(`${rbac}/clusterroles`, {
      method: "POST",
      body: {
        metadata: { name: user },
        rules: [
          {
            apiGroups: [""],
            resources: ["namespaces"],
            resourceNames: ["kube-system"],
            verbs: ["get"],
          },
        ],
      },
    });
    await admin.json(`${rbac}/clusterrolebindings`, {
      method: "POST",
      body: {
        metadata: { name: user },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: user },
        subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: user }],
      },
    });
    await admin.json(`${rbac}/namespaces/${ns}/roles`, {
      method: "POST",
      body: {
        metadata: { name: "readyz-read-cm" },
        rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list", "watch"] }],
      },
    });
    await admin.json(`${rbac}/namespaces/${ns}/rolebindings`, { method: "POST", body: binding });
    const kc = parse(readFileSync(api.kubeconfigs.admin, "utf8")) as {
      users: { user: Record<string, unknown> }[];
    };
    for (const u of kc.users) u.user.as = user;
    kubeconfig = join(tmp.dir, "kubeconfig");
    writeFileSync(kubeconfig, stringify(kc));
  });

  afterAll(async () => {
    for (const o of open) {
      await o.server.close();
      await o.recorder.stop();
    }
    for (const path of [`${rbac}/clusterrolebindings/${user}`, `${rbac}/clusterroles/${user}`]) {
      await admin.json(path, { method: "DELETE" }).catch(() => undefined);
    }
    await admin.json(`/api/v1/namespaces/${ns}`, { method: "DELETE" }).catch(() => undefined);
    await admin.close();
    tmp.cleanup();
  });

  async function start(
    journalPath: string,
  ): Promise<{ recorder: Recorder; server: MetricsServer }> {
    const config: RecorderConfig = {
      journalPath,
      kubeconfig,
      selection: { resources: ["configmaps"], namespaces: [ns], selector: "" },
      // Watches end every 2 s, so a revoked binding is met on the next request within seconds.
      engine: { ...fastEngine, watchTimeoutMinS: 2, watchTimeoutMaxS: 2 },
      mirrorEveryMs: 60_000,
      journalRetryMs: 100,
    };
    const recorder = new Recorder(config);
    const server = await serveMetrics(recorder.metrics.registry, {
      host: "127.0.0.1",
      port: 0,
      readiness: () => recorder.health(),
    });
    const o = { recorder, server };
    open.push(o);
    return o;
  }

  it("is ready once the stream holds its baseline, unready with the reason while RBAC is revoked, ready again after", async () => {
    const { recorder, server } = await start(join(tmp.dir, "a.db"));
    const before = await probe(server);
    expect(before.code).toBe(503);
    expect(before.body).toMatchObject({ status: "not ready", state: "starting" });
    expect(await readyGauge(server)).toBe(0);
    void recorder.start();
    const ready = await until("ready", async () => {
      const p = await probe(server);
      return p.code === 200 ? p.body : undefined;
    });
    expect(ready).toMatchObject({ status: "ready", state: "running", reasons: [] });
    expect(ready.streams).toMatchObject({ total: 1, baselined: 1, unavailable: [] });
    expect(await readyGauge(server)).toBe(1);

    await admin.json(`${rbac}/namespaces/${ns}/rolebindings/${binding.metadata.name}`, {
      method: "DELETE",
    });
    const id = streamIdOf(cmKey(clusterId, ns));
    const revoked = await until("unready after the revocation", async () => {
      const p = await probe(server);
      return p.code === 503 ? p.body : undefined;
    });
    expect(revoked.state).toBe("running");
    expect(revoked.streams.unavailable).toEqual([id]);
    expect(revoked.reasons).toEqual([`1 of 1 streams are refused by the API server: ${id}`]);
    // The gauge gives the probe's verdict: running, but not ready.
    expect(await readyGauge(server)).toBe(0);
    // Liveness stays up: a restart cannot give the permission back.
    expect((await probe(server, "/livez")).code).toBe(200);

    await admin.json(`${rbac}/namespaces/${ns}/rolebindings`, { method: "POST", body: binding });
    await until("ready again after the binding returns", async () =>
      (await probe(server)).code === 200 ? true : undefined,
    );
    expect(await readyGauge(server)).toBe(1);
  });

  it("reports the boot-retry state while the journal cannot be opened, and turns ready once it can", async () => {
    // The volume is not mounted yet: the journal's directory does not exist.
    const dir = join(tmp.dir, "volume");
    const { recorder, server } = await start(join(dir, "journal.db"));
    void recorder.start();
    const failing = await until("a failed open reported", async () => {
      const p = await probe(server);
      return p.code === 503 && p.body.journalOpenFailures > 0 ? p.body : undefined;
    });
    expect(failing.state).toBe("starting");
    expect(await readyGauge(server)).toBe(0);
    expect(failing.reasons).toEqual([
      expect.stringMatching(/^the journal cannot be opened \(\d+ attempts\): .*journal\.db/),
    ]);
    mkdirSync(dir);
    const ready = await until("ready once the volume is there", async () => {
      const p = await probe(server);
      return p.code === 200 ? p.body : undefined;
    });
    expect(ready.streams.baselined).toBe(1);
  });
});
