// One KubeClient carries the recorder's watches over one HTTP/2 session. undici 7 holds a write (a
// non-idempotent request) back while another stream on that session is open, so a write through a
// client that watches would wait forever; the client sends writes on connections of their own.
import { randomBytes } from "node:crypto";
import { sharedApiServer } from "../apiserver/shared";
import { KubeClient, loadKubeConfig } from "../../src/kube/client";

const api = sharedApiServer();
const ns = `writes-${randomBytes(4).toString("hex")}`;
const WRITERS = 4;
const WRITES_EACH = 10;

let client: KubeClient;

beforeAll(async () => {
  client = await KubeClient.create(loadKubeConfig({ kubeconfig: api.kubeconfigs.admin }));
  await client.json("/api/v1/namespaces", {
    method: "POST",
    body: { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } },
  });
}, 60_000);

afterAll(async () => {
  await client.json(`/api/v1/namespaces/${ns}`, { method: "DELETE" }).catch(() => undefined);
  await client.close();
});

/** Rejects with a message naming what stalled, so a hang fails the test instead of its timeout. */
function within<T>(ms: number, what: string, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  return Promise.race([p, limit]).finally(() => clearTimeout(timer));
}

describe("a KubeClient that watches", () => {
  it("answers writes while its watches stay open on the same session", async () => {
    expect(client.protocol).toBe("h2");
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    for (let w = 0; w < WRITERS; w++) {
      await client.json(path, {
        method: "POST",
        body: { metadata: { name: `cm-${w}` }, data: {} },
      });
    }
    const listed = await client.json<{ metadata: { resourceVersion: string } }>(path);
    const rv = listed.metadata.resourceVersion;
    const stop = new AbortController();
    const seen = new Set<string>();
    // Both watch streams are open (their headers arrived) before the first write goes out.
    const opened = await Promise.all(
      [path, `/apis/apps/v1/namespaces/${ns}/deployments`].map(p =>
        client.stream(p, { watch: "true", resourceVersion: rv }, stop.signal),
      ),
    );
    const watches = opened.map(async res => {
      let buf = "";
      try {
        for await (const chunk of res.body as AsyncIterable<Buffer>) {
          buf += chunk.toString("utf8");
          for (let i = buf.indexOf("\n"); i >= 0; i = buf.indexOf("\n")) {
            const line = buf.slice(0, i);
            buf = buf.slice(i + 1);
            const ev = JSON.parse(line) as { object: { data?: Record<string, string> } };
            const rev = ev.object.data?.revision;
            if (rev) seen.add(rev);
          }
        }
      } catch (err) {
        if (!stop.signal.aborted) throw err;
      }
    });
    const writes = Array.from({ length: WRITERS }, async (_, w) => {
      for (let i = 0; i < WRITES_EACH; i++) {
        await client.json(`${path}/cm-${w}`, {
          method: "PATCH",
          contentType: "application/merge-patch+json",
          body: { data: { revision: `${w}-${i}` } },
        });
      }
    });
    await within(30_000, "PATCH through the watching client", Promise.all(writes));
    const deadline = Date.now() + 10_000;
    while (seen.size < WRITERS * WRITES_EACH && Date.now() < deadline) {
      await new Promise(r => setTimeout(r, 50));
    }
    expect(seen.size).toBe(WRITERS * WRITES_EACH);
    stop.abort();
    await Promise.all(watches);
  }, 90_000);
});
