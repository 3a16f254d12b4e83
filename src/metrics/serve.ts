import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Registry } from "prom-client";

/** A running /metrics endpoint. */
export interface MetricsServer {
  /** The port it listens on (the one asked for, or the free one picked for port 0). */
  readonly port: number;
  close(): Promise<void>;
}

/**
 * Serves one prom-client registry at GET /metrics on a port of its own. Pepr's /metrics serves only
 * Pepr's private registry (its collector offers prefixed counters, not a registry to merge), so the
 * recorder's metrics get their own endpoint in the watcher process.
 */
export async function serveMetrics(
  registry: Registry,
  opts: { host: string; port: number },
): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (path !== "/metrics") {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found: try /metrics\n");
      return;
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { allow: "GET, HEAD" }).end();
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
