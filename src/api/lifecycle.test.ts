// The sidecar under load it must survive: a query past its limit, and a stop with requests in flight.
import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { buildJournal } from "../../bench/lib-materialize-data";
import { call, startApiServer, testServerOptions } from "../../test/support/api-fixtures";
import { tempJournalPath } from "../../test/support/journal-fixtures";

// Starting workers and a child process takes seconds on a shared machine.
jest.setTimeout(180_000);

// A journal big enough that materializing every object takes far longer than the limits below.
let tmp: ReturnType<typeof tempJournalPath>;
const json = { "content-type": "application/json" };
const heavy = { method: "POST", headers: json, body: JSON.stringify({ objects: true }) };

beforeAll(() => {
  tmp = tempJournalPath("krply-api-lc-");
  buildJournal(tmp.path, 6000, 3000, 500).journal.close();
});
afterAll(() => tmp?.cleanup());

it("cancels a query past its limit with a 503, replaces the worker and stays up", async () => {
  const server = await startApiServer(testServerOptions(tmp.path, { queryTimeoutMs: 50 }));
  try {
    const r = await call(server, "/v1/snapshots?dryRun=true", heavy);
    expect(r.status).toBe(503);
    expect(r.json.error).toMatchObject({ status: 503, code: "timeout" });
    expect(r.json.error.message).toMatch(/longer than its limit of 50 ms and was cancelled/);
    expect((await call(server, "/v1/ready")).status).toBe(200);
    expect((await call(server, "/v1/streams")).status).toBe(200);
    const metrics = async () => (await call(server, "/metrics")).text;
    expect(await metrics()).toMatch(/krply_api_query_timeouts_total\{query="takeSnapshot"\} 1/);
    for (let i = 0; i < 100 && !/krply_api_worker_replacements_total 1/.test(await metrics()); i++)
      await new Promise(res => setTimeout(res, 50));
    expect(await metrics()).toMatch(/krply_api_worker_replacements_total 1/);
  } finally {
    await server.close();
  }
});

/** Nice values of this process's threads (Linux sets them per thread), from /proc. */
function threadNices(): number[] {
  const dir = `/proc/${process.pid}/task`;
  return readdirSync(dir).map(t => {
    const stat = readFileSync(join(dir, t, "stat"), "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]);
  });
}

it("runs heavy queries on one background thread at low CPU priority, the rest at the process's", async () => {
  const before = threadNices();
  const server = await startApiServer(testServerOptions(tmp.path));
  try {
    const r = await call(server, "/v1/snapshots?dryRun=true", heavy);
    expect(r.status).toBe(200);
    const own = before.filter(n => n === 15).length;
    expect(threadNices().filter(n => n === 15).length).toBe(own + 1);
    // The main thread (whose tid is the pid) keeps its priority.
    const main = readFileSync(`/proc/${process.pid}/task/${process.pid}/stat`, "utf8");
    expect(Number(main.slice(main.lastIndexOf(")") + 2).split(" ")[16])).not.toBe(15);
  } finally {
    await server.close();
  }
});

it("on close stops accepting, finishes the request in flight, then closes its workers", async () => {
  const server = await startApiServer(testServerOptions(tmp.path));
  const inFlight = call(server, "/v1/snapshots?dryRun=true", heavy);
  await new Promise(res => setTimeout(res, 100));
  const closed = server.close();
  expect(server.closing).toBe(true);
  await expect(fetch(`${server.url}/v1/health`)).rejects.toThrow();
  const r = await inFlight;
  expect(r.status).toBe(200);
  expect(r.json.data.objects).toHaveLength(3000);
  await closed;
});

it("the entry point exits 0 on SIGTERM after answering the request in flight", async () => {
  const child = spawn(
    process.execPath,
    ["--require", require.resolve("tsx/cjs"), join(__dirname, "main.ts")],
    {
      env: {
        ...process.env,
        KRPLY_JOURNAL: tmp.path,
        KRPLY_API_AUTH: "none",
        KRPLY_API_HOST: "127.0.0.1",
        KRPLY_API_PORT: "0",
        KRPLY_LOG_LEVEL: "info",
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const exited = new Promise<number | null>(res => child.on("close", code => res(code)));
  let out = "";
  const url = await new Promise<string>((res, rej) => {
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /"address":"([^"]+)"/.exec(out);
      if (m) res(`http://${m[1]}`);
    });
    child.on("exit", () => rej(new Error(`sidecar exited before listening: ${out}`)));
  });
  const inFlight = fetch(`${url}/v1/snapshots?dryRun=true`, heavy);
  await new Promise(res => setTimeout(res, 150));
  child.kill("SIGTERM");
  const r = await inFlight;
  expect(r.status).toBe(200);
  expect(((await r.json()) as { data: { objects: unknown[] } }).data.objects).toHaveLength(3000);
  expect(await exited).toBe(0);
  expect(out).toContain("query sidecar stopped");
});
