// Saturation of the recorder: a watch stream recorded from the real API server is replayed by
// test/fakeapi as fast as the socket takes it, so the recorder, not the server, sets the pace. The
// baseline is the same lines parsed and inserted as rows by raw better-sqlite3 with the pragmas the
// recorder's journal gets, in transactions of the recorder's batch size.
import { once } from "node:events";
import { join } from "node:path";
import Database from "better-sqlite3";
import type { StreamKey } from "../src/event";
import { CONNECTION_DEFAULTS, openJournal } from "../src/journal";
import { KubeClient, loadKubeConfig } from "../src/kube/client";
import { RECORDER_JOURNAL_CACHES } from "../src/watch/recorder";
import { Supervisor } from "../src/watch/supervisor";
import { EngineOptionsSchema } from "../src/watch/types";
import { json, startFakeApi, type Responder } from "../test/fakeapi";

/** One recorded watch: its collection path, item kind and lines (each with its newline). */
export interface RecordedWatch {
  path: string;
  kind: string;
  resource: string;
  group: string;
  version: string;
  lines: string[];
}

/**
 * Reads a watch from the real server from `rv` until `count` lines, `ms` elapsed or `stop` fires.
 * Started before the writes it records: a watch cache (Deployments have one) keeps a short window,
 * and a watch begun after thousands of writes from the RV before them answers 410 Expired.
 */
export async function captureWatch(
  client: KubeClient,
  w: Omit<RecordedWatch, "lines">,
  rv: string,
  count: number,
  ms: number,
  stop?: Promise<unknown>,
): Promise<RecordedWatch> {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), ms);
  void stop?.then(() => ac.abort());
  const res = await client.stream(w.path, { watch: "true", resourceVersion: rv }, ac.signal);
  const lines: string[] = [];
  let rest = "";
  try {
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      const parts = (rest + chunk.toString("utf8")).split("\n");
      rest = parts.pop() ?? "";
      for (const p of parts) if (p.trim()) lines.push(`${p}\n`);
      if (lines.length >= count) break;
    }
  } catch (err) {
    if (!ac.signal.aborted) throw err;
  } finally {
    clearTimeout(timer);
    res.body.destroy();
  }
  return { ...w, lines: lines.filter(l => !l.includes('"type":"BOOKMARK"')) };
}

/**
 * `n` lines built from the recorded ones, round-robin, each with a fresh increasing resourceVersion
 * (prepared before timing starts), so every line is a new version to the recorder, as on a real
 * server.
 */
export function expand(lines: string[], n: number, firstRv: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const ev = JSON.parse(lines[i % lines.length]) as {
      object: { metadata: { resourceVersion: string } };
    };
    ev.object.metadata.resourceVersion = String(firstRv + i);
    out.push(`${JSON.stringify(ev)}\n`);
  }
  return out;
}

/** Writes the lines as one chunked response, waiting for the socket to drain, then keeps it open. */
function serve(lines: string[]): Responder {
  return async res => {
    res.writeHead(200, { "content-type": "application/json", "transfer-encoding": "chunked" });
    let buf = "";
    for (const l of lines) {
      buf += l;
      if (buf.length < 64 * 1024) continue;
      if (!res.write(buf)) await once(res, "drain");
      buf = "";
    }
    if (buf) res.write(buf);
  };
}

/** Events/s of the recorder (Supervisor and journal, in this process) on the replayed watches. */
export async function recorderRate(dir: string, watches: RecordedWatch[]): Promise<number> {
  const fake = await startFakeApi();
  const byPath = new Map(watches.map(w => [w.path, w]));
  const list: Responder = res =>
    json(res, 200, { kind: "List", metadata: { resourceVersion: "1" }, items: [] });
  const watch: Responder = (res, req) => serve(byPath.get(req.path)!.lines)(res, req);
  fake.onList(...watches.map(() => list));
  fake.onWatch(...watches.map(() => watch));
  const total = watches.reduce((n, w) => n + w.lines.length, 0);
  const client = await KubeClient.create(loadKubeConfig({ kubeconfig: fake.kubeconfig }));
  const journal = openJournal(join(dir, `saturation-${Date.now()}.db`), {
    ...RECORDER_JOURNAL_CACHES,
  });
  let events = 0;
  let firstAt = 0;
  let lastAt = 0;
  let done!: () => void;
  const finished = new Promise<void>(r => (done = r));
  const sup = new Supervisor({
    client,
    journal,
    onCommit: (items, at) => {
      for (const it of items) for (const r of it.records) if (r.type === "event") events++;
      firstAt ||= at;
      lastAt = at;
      if (events >= total) done();
    },
  });
  try {
    const started = Date.now();
    for (const w of watches) {
      const key: StreamKey = {
        clusterId: "saturation",
        group: w.group,
        version: w.version,
        resource: w.resource,
        namespace: "",
        selector: "",
      };
      sup.add({ key, kind: w.kind, path: w.path });
    }
    await fake.waitForWatch(watches.length, 60_000);
    const t0 = Math.max(started, fake.requests.filter(r => r.watch)[0].at);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      finished,
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error("saturation timed out")), 600_000);
      }),
    ]).finally(() => clearTimeout(timer));
    return total / ((lastAt - t0) / 1000);
  } finally {
    await sup.stop();
    journal.close();
    await client.close();
    await fake.close();
  }
}

/** Events/s of parsing the same lines and inserting each as a row, batched as the recorder's sink does. */
export function rawRate(dir: string, watches: RecordedWatch[]): number {
  const db = new Database(join(dir, `raw-${Date.now()}.db`));
  db.pragma(`page_size = ${CONNECTION_DEFAULTS.pageSize}`);
  db.pragma("journal_mode = WAL");
  db.pragma(`synchronous = ${CONNECTION_DEFAULTS.sync}`);
  db.pragma(`cache_size = -${RECORDER_JOURNAL_CACHES.pageCacheKiB}`);
  db.exec("CREATE TABLE raw (id INTEGER PRIMARY KEY, json BLOB NOT NULL)");
  const ins = db.prepare("INSERT INTO raw (json) VALUES (?)");
  const batch = EngineOptionsSchema.parse({}).maxBatch;
  const txn = db.transaction((objs: unknown[]) => {
    for (const o of objs) ins.run(JSON.stringify(o));
  });
  const t0 = performance.now();
  let n = 0;
  // The streams interleave line by line, as their sockets would feed one process.
  const longest = Math.max(...watches.map(w => w.lines.length));
  let pending: unknown[] = [];
  for (let i = 0; i < longest; i++) {
    for (const w of watches) {
      if (i >= w.lines.length) continue;
      pending.push((JSON.parse(w.lines[i]) as { object: unknown }).object);
      n++;
      if (pending.length >= batch) {
        txn(pending);
        pending = [];
      }
    }
  }
  if (pending.length > 0) txn(pending);
  const s = (performance.now() - t0) / 1000;
  db.close();
  return n / s;
}
