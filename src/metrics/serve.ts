import { createServer, type ServerResponse, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Registry } from "prom-client";

/** A running /metrics endpoint. */
export interface MetricsServer {
  /** The port it listens on (the one asked for, or the free one picked for port 0). */
  readonly port: number;
  close(): Promise<void>;
}

/** What GET /readyz answers: ready or not; every other field goes into the JSON body, to say why. */
export type ReadinessProbe = () => { ready: boolean };

/** The paths the endpoint serves besides /metrics (the chart's probes name them). */
export const PROBE_PATHS = { readiness: "/readyz", liveness: "/livez" } as const;

function sendJson(res: ServerResponse, status: number, body: unknown, head: boolean): void {
  const text = `${JSON.stringify(body)}\n`;
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
  res.end(head ? undefined : text);
}

/**
 * Serves one prom-client registry at GET /metrics on a port of its own. Pepr's /metrics serves only
 * Pepr's private registry (its collector offers prefixed counters, not a registry to merge), so the
 * recorder's metrics get their own endpoint in the watcher process. With a readiness probe it also
 * answers GET /readyz (200 ready, 503 with the reasons) and GET /livez: Pepr's own /healthz says
 * only that its server runs, not whether anything is recorded.
 */
export async function serveMetrics(
  registry: Registry,
  opts: { host: string; port: number; readiness?: ReadinessProbe },
): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    const probe = opts.readiness;
    const known =
      path === "/metrics" || (probe && Object.values(PROBE_PATHS).includes(path as never));
    if (!known) {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found: try /metrics\n");
      return;
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { allow: "GET, HEAD" }).end();
      return;
    }
    const head = req.method === "HEAD";
    if (path === PROBE_PATHS.liveness) {
      // Alive while the event loop answers. Nothing the recorder reports is fixed by a restart (a
      // refused journal, revoked RBAC, an API server outage), so those only make it unready.
      sendJson(res, 200, { status: "alive" }, head);
      return;
    }
    if (path === PROBE_PATHS.readiness && probe) {
      let health: ReturnType<ReadinessProbe>;
      try {
        health = probe();
      } catch (err) {
        sendJson(
          res,
          503,
          { status: "not ready", reasons: [`health check failed: ${String(err)}`] },
          head,
        );
        return;
      }
      sendJson(
        res,
        health.ready ? 200 : 503,
        { status: health.ready ? "ready" : "not ready", ...health },
        head,
      );
      return;
    }
    registry.metrics().then(
      text => res.writeHead(200, { "content-type": registry.contentType }).end(text),
      (err: unknown) =>
        res
          .writeHead(500, { "content-type": "text/plain" })
          .end(`metrics failed: ${String(err)}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>(resolve => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
