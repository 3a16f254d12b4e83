import { request } from "node:http";
import { z } from "zod";

// The harness's egress proxy (egress.go), driven through its control endpoint. kube-apiserver sends every
// `cluster` connection (webhooks, CRD conversion, aggregated APIs) through this proxy, which forwards loopback
// targets, maps registered Services to local ports, and refuses everything else.

const routeSchema = z.object({
  service: z.string(),
  port: z.number().int(),
  localPort: z.number().int(),
});

const eventSchema = z.object({
  seq: z.number().int(),
  at: z.string(),
  /** The CONNECT target as kube-apiserver sent it: `<clusterIP>:<port>` for a Service, else host:port. */
  target: z.string(),
  /** `name.namespace.svc:port`, when the target is (or resolves to) a Service of the harness. */
  service: z.string().optional(),
  outcome: z.enum(["routed", "loopback", "refused", "unreachable"]),
  /** The loopback address the proxy dialed. */
  upstream: z.string().optional(),
  /** The proxy's own end of that connection (127.0.0.1:port), which the local server sees as the peer. */
  via: z.string().optional(),
  reason: z.string().optional(),
});

const logSchema = z.object({
  proxyUrl: z.string(),
  routes: z.array(routeSchema),
  events: z.array(eventSchema),
});

const certSchema = z.object({ cert: z.string(), key: z.string(), ca: z.string() });

/** A Service (`name.namespace.svc` and its Service port) served by a process on 127.0.0.1:localPort. */
export type EgressRoute = z.infer<typeof routeSchema>;
/** One connection kube-apiserver asked the proxy for. */
export type EgressEvent = z.infer<typeof eventSchema>;
/** What GET /egress returns. */
export type EgressLog = z.infer<typeof logSchema>;
/** A serving certificate signed by the harness CA; `ca` is the caBundle a webhook configuration needs. */
export type HarnessCertificate = z.infer<typeof certSchema>;

/** The egress calls of one harness, bound to its control URL. */
export interface EgressControl {
  /** Sends the API server's connections for `service:port` to 127.0.0.1:localPort. Survives a restart. */
  register(route: EgressRoute): Promise<void>;
  unregister(service: string, port: number): Promise<void>;
  /** Routes, and the connections since `afterSeq` (the proxy keeps the last 1000). */
  log(afterSeq?: number): Promise<EgressLog>;
  /** A certificate for these DNS names that the API server trusts through the returned CA. */
  certificate(dnsNames: string[]): Promise<HarnessCertificate>;
}

function call(controlUrl: string, method: string, path: string, body?: unknown): Promise<unknown> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolveBody, reject) => {
    const req = request(
      new URL(path, controlUrl),
      {
        method,
        // Node sends a DELETE body unframed unless its length is given, and Go then reads none.
        headers: payload
          ? { "content-type": "application/json", "content-length": Buffer.byteLength(payload) }
          : {},
      },
      res => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("error", reject);
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          if ((res.statusCode ?? 0) >= 300) {
            reject(new Error(`${method} ${path} on the harness: HTTP ${res.statusCode}: ${text}`));
          } else resolveBody(JSON.parse(text) as unknown);
        });
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

/** Binds the egress calls to a harness's control endpoint (ApiServerInfo.controlUrl). */
export function egressControl(controlUrl: string): EgressControl {
  return {
    async register(route) {
      await call(controlUrl, "PUT", "/egress/routes", routeSchema.parse(route));
    },
    async unregister(service, port) {
      await call(controlUrl, "DELETE", "/egress/routes", { service, port });
    },
    async log(afterSeq = 0) {
      return logSchema.parse(await call(controlUrl, "GET", `/egress?after=${afterSeq}`));
    },
    async certificate(dnsNames) {
      return certSchema.parse(await call(controlUrl, "POST", "/egress/certificates", { dnsNames }));
    },
  };
}
