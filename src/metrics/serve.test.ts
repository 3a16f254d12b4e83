import { Registry } from "prom-client";
import { PROBE_PATHS, serveMetrics, type MetricsServer } from "./serve";

// Loopback and a free port: the endpoint as the watcher serves it, minus the fixed 9464.
const at = { host: "127.0.0.1", port: 0 };

describe("the recorder's metrics endpoint with readiness and liveness", () => {
  let server: MetricsServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });
  const url = (path: string) => `http://127.0.0.1:${server!.port}${path}`;

  it("answers /readyz with 200 and the health as JSON while the probe says ready", async () => {
    server = await serveMetrics(new Registry(), {
      ...at,
      readiness: () => ({ ready: true, state: "running", reasons: [] }),
    });
    const res = await fetch(url(PROBE_PATHS.readiness));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(await res.json()).toEqual({
      status: "ready",
      ready: true,
      state: "running",
      reasons: [],
    });
  });

  it("answers /readyz with 503 and the reasons while it is not, and follows the probe each time", async () => {
    let health = { ready: false, state: "retrying", reasons: ["start attempt 2 failed; retrying"] };
    server = await serveMetrics(new Registry(), { ...at, readiness: () => health });
    const res = await fetch(url("/readyz?verbose"));
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({
      status: "not ready",
      state: "retrying",
      reasons: ["start attempt 2 failed; retrying"],
    });
    health = { ready: true, state: "running", reasons: [] };
    expect((await fetch(url("/readyz"))).status).toBe(200);
    // Kubernetes' httpGet probes may send HEAD through proxies: the status alone, no body.
    const head = await fetch(url("/readyz"), { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
  });

  it("answers 503 with a reason, never a stack trace, when the probe itself throws", async () => {
    server = await serveMetrics(new Registry(), {
      ...at,
      readiness: () => {
        throw new Error("supervisor gone");
      },
    });
    const res = await fetch(url("/readyz"));
    expect(res.status).toBe(503);
    const body = await res.text();
    expect(JSON.parse(body)).toEqual({
      status: "not ready",
      reasons: ["health check failed: Error: supervisor gone"],
    });
    expect(body).not.toMatch(/\bat .*\(.*:\d+:\d+\)/);
  });

  it("answers /livez with 200 whatever readiness says: a restart cannot fix what makes it unready", async () => {
    server = await serveMetrics(new Registry(), {
      ...at,
      readiness: () => ({ ready: false, state: "refused" }),
    });
    const res = await fetch(url(PROBE_PATHS.liveness));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "alive" });
    expect((await fetch(url("/livez"), { method: "POST" })).status).toBe(405);
  });

  it("serves /metrics beside the probes, and without a probe only /metrics", async () => {
    const registry = new Registry();
    server = await serveMetrics(registry, { ...at, readiness: () => ({ ready: true }) });
    expect((await fetch(url("/metrics"))).status).toBe(200);
    expect((await fetch(url("/healthz"))).status).toBe(404);
    await server.close();
    server = await serveMetrics(registry, at);
    expect((await fetch(url("/metrics"))).status).toBe(200);
    expect((await fetch(url("/readyz"))).status).toBe(404);
    expect((await fetch(url("/livez"))).status).toBe(404);
  });
});
