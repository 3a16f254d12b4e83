// A scripted API server for the faults a real kube-apiserver will not produce on demand: torn chunks, a
// malformed line, 429 with Retry-After, a stalled stream, a connection cut at a chosen byte.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** One request as the fake saw it. */
export interface SeenRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  watch: boolean;
  at: number;
}

/** A scripted answer; it owns the response and may write, delay, stall or cut it. */
export type Responder = (res: ServerResponse, req: SeenRequest) => void | Promise<void>;

export interface FakeApi {
  url: string;
  /** A kubeconfig pointing at the fake with a bearer token. */
  kubeconfig: string;
  /**
   * The same with insecure-skip-tls-verify set. client-node, and so kubernetes-fluent-client, refuses an
   * http:// server without it, though no TLS is involved.
   */
  insecureKubeconfig: string;
  requests: SeenRequest[];
  /** Queues answers to LIST requests, used in order. */
  onList(...r: Responder[]): void;
  /** Queues answers to WATCH requests, used in order; when empty a watch stays open silently. */
  onWatch(...r: Responder[]): void;
  /** Resolves when the nth (1-based) watch request has arrived. */
  waitForWatch(n: number, timeoutMs?: number): Promise<SeenRequest>;
  close(): Promise<void>;
}

/** A ConfigMap as a watch or list would carry it. */
export function cm(name: string, rv: number, data: Record<string, string> = {}) {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace: "default", uid: `uid-${name}`, resourceVersion: String(rv) },
    data,
  };
}

/** One watch line (with its newline). */
export function line(type: string, object: unknown): string {
  return JSON.stringify({ type, object }) + "\n";
}

/** A LIST answer with the given items and list RV. */
export function listOf(rv: number, items: unknown[], cont = ""): Responder {
  return res =>
    json(res, 200, {
      kind: "ConfigMapList",
      metadata: { resourceVersion: String(rv), continue: cont || undefined },
      items,
    });
}

/** Any JSON answer. */
export function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
) {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

/** A Status failure, optionally with Retry-After. */
export function status(code: number, reason: string, retryAfter?: string): Responder {
  return res =>
    json(
      res,
      code,
      {
        kind: "Status",
        apiVersion: "v1",
        status: "Failure",
        reason,
        code,
        message: `fake ${reason}`,
      },
      retryAfter ? { "retry-after": retryAfter } : {},
    );
}

const sleep = (ms: number) => new Promise(r => setTimeout(r, ms));

/** Streams the pieces with a pause between them, then ends (or keeps the watch open). */
export function chunks(
  pieces: (string | Buffer)[],
  opts: { gapMs?: number; keepOpen?: boolean } = {},
): Responder {
  return async res => {
    res.writeHead(200, { "content-type": "application/json", "transfer-encoding": "chunked" });
    res.flushHeaders();
    for (const p of pieces) {
      res.write(p);
      await sleep(opts.gapMs ?? 5);
    }
    if (!opts.keepOpen) res.end();
  };
}

/** One step of a scripted response: bytes to write, or a wait until the test says to go on. */
export type Step = string | Buffer | (() => Promise<unknown>);

/**
 * Writes the steps in order, awaiting each function step before the next write. A wait between two
 * writes makes them arrive as separate chunks, and lets the test decide what the client has done
 * before the next bytes reach it, without relying on timing.
 */
export function steps(script: Step[], opts: { keepOpen?: boolean } = {}): Responder {
  return async res => {
    res.writeHead(200, { "content-type": "application/json", "transfer-encoding": "chunked" });
    res.flushHeaders();
    for (const s of script) {
      if (typeof s === "function") await s();
      else res.write(s);
    }
    if (!opts.keepOpen) res.end();
  };
}

/** Writes the text, then destroys the socket after `cutAt` bytes of it: a connection lost mid-event. */
export function cutAfter(text: string, cutAt: number): Responder {
  return async res => {
    res.writeHead(200, { "content-type": "application/json", "transfer-encoding": "chunked" });
    res.flushHeaders();
    res.write(Buffer.from(text).subarray(0, cutAt));
    await sleep(30);
    (res.socket as Socket).destroy();
  };
}

/** Sends headers and then nothing at all: a stalled stream. */
export const stall: Responder = res => {
  res.writeHead(200, { "content-type": "application/json", "transfer-encoding": "chunked" });
  res.flushHeaders();
};

// A responder that throws ends its connection with the error, which the client sees as a network fault.
function play(r: Responder, res: ServerResponse, seen: SeenRequest): void {
  Promise.resolve()
    .then(() => r(res, seen))
    .catch((err: unknown) => res.destroy(err instanceof Error ? err : new Error(String(err))));
}

/** Starts the fake on a free loopback port. */
export async function startFakeApi(): Promise<FakeApi> {
  const lists: Responder[] = [];
  const watches: Responder[] = [];
  const requests: SeenRequest[] = [];
  const waiters: { n: number; resolve: (r: SeenRequest) => void }[] = [];
  const open = new Set<Socket>();
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const u = new URL(req.url ?? "/", "http://fake");
    const seen: SeenRequest = {
      method: req.method ?? "GET",
      path: u.pathname,
      query: u.searchParams,
      watch: u.searchParams.get("watch") === "true" || u.searchParams.get("watch") === "1",
      at: Date.now(),
    };
    requests.push(seen);
    if (u.pathname === "/api/v1/namespaces/kube-system") {
      json(res, 200, { kind: "Namespace", metadata: { name: "kube-system", uid: "fake-uid" } });
      return;
    }
    if (seen.watch) {
      const n = requests.filter(r => r.watch).length;
      for (const w of waiters.filter(w => w.n === n)) w.resolve(seen);
      play(watches.shift() ?? stall, res, seen);
      return;
    }
    play(lists.shift() ?? status(500, "InternalError"), res, seen);
  });
  server.on("connection", s => {
    open.add(s);
    s.on("close", () => open.delete(s));
  });
  await new Promise<void>(r => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const dir = mkdtempSync(join(tmpdir(), "krply-fakeapi-"));
  const kubeconfig = join(dir, "kubeconfig");
  const config = (clusterExtra: string) =>
    `apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster:\n    server: ${url}\n${clusterExtra}users:\n- name: u\n  user:\n    token: fake-token\ncontexts:\n- name: fake\n  context:\n    cluster: fake\n    user: u\ncurrent-context: fake\n`;
  writeFileSync(kubeconfig, config(""));
  const insecureKubeconfig = join(dir, "kubeconfig-insecure");
  writeFileSync(insecureKubeconfig, config("    insecure-skip-tls-verify: true\n"));
  return {
    url,
    kubeconfig,
    insecureKubeconfig,
    requests,
    onList: (...r) => lists.push(...r),
    onWatch: (...r) => watches.push(...r),
    waitForWatch: (n, timeoutMs = 20_000) => {
      const have = requests.filter(r => r.watch);
      if (have.length >= n) return Promise.resolve(have[n - 1]);
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`watch #${n} never arrived`)), timeoutMs);
        waiters.push({ n, resolve: r => (clearTimeout(t), resolve(r)) });
      });
    },
    close: async () => {
      for (const s of open) s.destroy();
      await new Promise<void>(r => server.close(() => r()));
    },
  };
}
