// The harness's API server reaches webhooks only through the harness's own CONNECT proxy (egress.go): a Service
// registered with the proxy is served by a process on 127.0.0.1, and every other destination is refused.
// Every webhook here selects only objects carrying this run's label, so the shared server's other users
// never meet it.
import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:https";
import { connect } from "node:tls";
import { readFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { sharedApiServer } from "../apiserver/shared";
import type { EgressEvent } from "../apiserver/egress-client";
import type { KubeResponse } from "../apiserver/rest";

const api = sharedApiServer();
const run = randomBytes(4).toString("hex");
const ns = `egress-${run}`;
const vwcName = `krply-egress-${run}`;
const RUN_LABEL = "krply.dev/egress-test";
const vwcPath = `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${vwcName}`;

interface Seen {
  name: string;
  peer: string;
}

let hookServer: Server;
let hookPort = 0;
const seen: Seen[] = [];
let caBundle = "";
let counter = 0;

async function ok(res: Promise<KubeResponse>, what: string): Promise<KubeResponse> {
  const r = await res;
  if (r.status >= 300) throw new Error(`${what}: HTTP ${r.status}: ${r.text}`);
  return r;
}

function configMap(hook: string, name = `cm-${hook}-${++counter}`) {
  return api.request("admin", "POST", `/api/v1/namespaces/${ns}/configmaps`, {
    metadata: { name, labels: { [RUN_LABEL]: run, hook } },
    data: { a: "1" },
  });
}

function webhook(hook: string, service: string, failurePolicy: "Fail" | "Ignore") {
  return {
    name: `${hook}.egress.krply.dev`,
    clientConfig: {
      service: { namespace: ns, name: service, path: "/validate", port: 443 },
      caBundle,
    },
    rules: [
      {
        apiGroups: [""],
        apiVersions: ["v1"],
        operations: ["CREATE"],
        resources: ["configmaps"],
        scope: "Namespaced",
      },
    ],
    objectSelector: { matchLabels: { [RUN_LABEL]: run, hook } },
    failurePolicy,
    sideEffects: "None",
    admissionReviewVersions: ["v1"],
    timeoutSeconds: 5,
  };
}

/** Repeats `attempt` until it holds: the API server picks up a new webhook configuration asynchronously. */
async function eventually<T>(what: string, attempt: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const out = await attempt();
    if (out !== undefined) return out;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise(done => setTimeout(done, 200));
  }
}

const eventsFor = async (service: string): Promise<EgressEvent[]> =>
  (await api.egress.log()).events.filter(e => e.service === service);

beforeAll(async () => {
  const cert = await api.egress.certificate([`hook.${ns}.svc`]);
  caBundle = Buffer.from(cert.ca).toString("base64");
  // The local process that serves the in-cluster webhook: it allows everything except names starting
  // with "deny-", and records which socket each review arrived on.
  hookServer = createServer({ cert: cert.cert, key: cert.key }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const review = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
        request: { uid: string; name?: string; object?: { metadata?: { name?: string } } };
      };
      const name = review.request.object?.metadata?.name ?? "";
      seen.push({ name, peer: `${req.socket.remoteAddress}:${req.socket.remotePort}` });
      const allowed = !name.startsWith("deny-");
      res.setHeader("content-type", "application/json");
      res.end(
        JSON.stringify({
          apiVersion: "admission.k8s.io/v1",
          kind: "AdmissionReview",
          response: {
            uid: review.request.uid,
            allowed,
            ...(allowed ? {} : { status: { code: 403, message: "denied by the local webhook" } }),
          },
        }),
      );
    });
  });
  await new Promise<void>(done => hookServer.listen(0, "127.0.0.1", done));
  hookPort = (hookServer.address() as AddressInfo).port;

  await ok(
    api.request("admin", "POST", "/api/v1/namespaces", { metadata: { name: ns } }),
    "namespace",
  );
  const svc = (name: string, spec: object) =>
    ok(
      api.request("admin", "POST", `/api/v1/namespaces/${ns}/services`, {
        metadata: { name },
        spec,
      }),
      `service ${name}`,
    );
  const clusterIP = { ports: [{ port: 443, targetPort: 8443 }] };
  await svc("hook", clusterIP);
  await svc("unregistered", clusterIP);
  await svc("ignored", clusterIP);
  // An ExternalName Service names a host off this machine; the API server dials that name.
  await svc("outside", { type: "ExternalName", externalName: "krply-egress-test.invalid" });
  await api.egress.register({ service: `hook.${ns}.svc`, port: 443, localPort: hookPort });

  await ok(
    api.request(
      "admin",
      "POST",
      "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
      {
        metadata: { name: vwcName },
        webhooks: [
          webhook("routed", "hook", "Fail"),
          webhook("refused-fail", "unregistered", "Fail"),
          webhook("refused-ignore", "ignored", "Ignore"),
          webhook("outside", "outside", "Fail"),
        ],
      },
    ),
    "webhook configuration",
  );
});

afterAll(async () => {
  await api.request("admin", "DELETE", vwcPath);
  await api.request("admin", "DELETE", `/api/v1/namespaces/${ns}`);
  await api.egress.unregister(`hook.${ns}.svc`, 443);
  await new Promise(done => hookServer?.close(done));
});

describe("the harness egress proxy", () => {
  it("routes a webhook's Service to the registered local process, over loopback only", async () => {
    const denied = await eventually("the routed webhook to deny", async () => {
      const res = await configMap("routed", `deny-${++counter}`);
      return res.status === 403 ? res : undefined;
    });
    expect(denied.text).toContain(
      'admission webhook \\"routed.egress.krply.dev\\" denied the request',
    );
    expect(denied.text).toContain("denied by the local webhook");
    const admitted = await configMap("routed", "allowed");
    expect(admitted.status).toBe(201);

    const cluster = await ok(
      api.request("admin", "GET", `/api/v1/namespaces/${ns}/services/hook`),
      "service",
    );
    const clusterIP = cluster.json<{ spec: { clusterIP: string } }>().spec.clusterIP;
    const events = await eventsFor(`hook.${ns}.svc:443`);
    expect(events.length).toBeGreaterThan(0);
    for (const e of events) {
      // kube-apiserver resolves the Service to its cluster IP before dialing; the proxy maps it back.
      expect(e).toMatchObject({
        target: `${clusterIP}:443`,
        outcome: "routed",
        upstream: `127.0.0.1:${hookPort}`,
      });
      expect(e.via).toMatch(/^127\.0\.0\.1:\d+$/);
    }
    // The local process saw the review for "allowed" on a socket the proxy opened.
    const vias = new Set(events.map(e => e.via));
    const review = seen.find(s => s.name === "allowed");
    expect(review).toBeDefined();
    expect(vias.has(review!.peer.replace(/^::ffff:/, ""))).toBe(true);
  });

  it("refuses an unregistered Service: failurePolicy Fail denies the write with the proxy's reason", async () => {
    const res = await eventually("the refused webhook to fail", async () => {
      const r = await configMap("refused-fail");
      return r.status >= 400 ? r : undefined;
    });
    expect(res.status).toBe(500);
    expect(res.text).toContain('failed calling webhook \\"refused-fail.egress.krply.dev\\"');
    expect(res.text).toContain(`krply harness egress refused`);
    expect(res.text).toContain(`Service unregistered.${ns}.svc:443 has no local port registered`);
    const events = await eventsFor(`unregistered.${ns}.svc:443`);
    expect(events.length).toBeGreaterThan(0);
    expect(events.every(e => e.outcome === "refused" && e.upstream === undefined)).toBe(true);
  });

  it("refuses an unregistered Service: failurePolicy Ignore admits the write", async () => {
    await eventually("a refused call for the ignored webhook", async () => {
      const r = await configMap("refused-ignore");
      expect(r.status).toBe(201);
      const events = await eventsFor(`ignored.${ns}.svc:443`);
      return events.length > 0 ? events : undefined;
    });
    const events = await eventsFor(`ignored.${ns}.svc:443`);
    expect(events.every(e => e.outcome === "refused")).toBe(true);
  });

  it("refuses a host name off this machine without looking it up", async () => {
    const res = await eventually("the outside webhook to fail", async () => {
      const r = await configMap("outside");
      return r.status >= 400 ? r : undefined;
    });
    expect(res.text).toContain("not loopback and not a Service of this cluster");
    const events = (await api.egress.log()).events.filter(
      e => e.target === "krply-egress-test.invalid:443",
    );
    expect(events.length).toBeGreaterThan(0);
    expect(events.every(e => e.outcome === "refused")).toBe(true);
  });

  it("serves only the API server: a client without the harness client certificate is turned away", async () => {
    const outcome = await new Promise<string>(done => {
      const socket = connect({
        host: "127.0.0.1",
        port: api.egressProxyPort,
        ca: readFileSync(api.caFile),
      });
      socket.on("secureConnect", () => socket.write("CONNECT 127.0.0.1:1 HTTP/1.1\r\n\r\n"));
      socket.on("data", d => done(`answered: ${d.toString("utf8")}`));
      socket.on("error", err => done(`error: ${err.message}`));
      socket.on("close", () => done("closed"));
    });
    expect(outcome).not.toMatch(/^answered/);
  });
});
