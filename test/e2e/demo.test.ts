// `npm run demo` end to end, run as a user runs it (npm, a terminal's Ctrl-C to its process group):
// against a reachable context (the shared API server, with the module under pepr dev) and against an
// unreachable one (the demo builds nothing here, the binary is cached, and starts its own API server).
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sharedApiServer } from "../apiserver/shared";
import { groupMembers } from "../../scripts/demo/children";
import { EXAMPLES, buildCli, commandLine, runExample } from "../../scripts/demo/examples";
import { PEPR_WEBHOOK_PATHS, peprPortAnswers } from "../../scripts/demo/module";
import { httpStatus } from "../../scripts/demo/sidecar";
import { acquirePeprDevLock } from "../support/pepr-dev-lock";

const root = join(__dirname, "..", "..");
const api = sharedApiServer();

interface DemoRun {
  child: ChildProcess;
  out(): string;
  exited: Promise<number | null>;
}

function startDemo(args: string[], env: Record<string, string>): DemoRun {
  let out = "";
  // detached: the demo leads its own process group, which a terminal's Ctrl-C signals as a whole.
  const child = spawn("npm", ["run", "--silent", "demo", "--", ...args], {
    cwd: root,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...env },
  });
  child.stdout?.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr?.on("data", (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>(done => child.once("exit", code => done(code)));
  return { child, out: () => out, exited };
}

async function waitForLine(run: DemoRun, text: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let ended = false;
  void run.exited.then(() => (ended = true));
  while (!run.out().includes(text)) {
    if (ended || Date.now() > deadline) {
      throw new Error(`no "${text}" from the demo${ended ? " (it exited)" : ""}:\n${run.out()}`);
    }
    await new Promise(r => setTimeout(r, 250));
  }
}

/** The lines the demo printed under `$ <command>`, up to the next blank line. */
function printedOutput(out: string, command: string): string {
  const start = out.indexOf(`$ ${command}\n`);
  if (start < 0) throw new Error(`the demo did not print ${command}`);
  const body = out.slice(start + command.length + 3);
  return body.slice(0, body.indexOf("\n\n")).trimEnd();
}

const field = (out: string, re: RegExp): string => {
  const m = out.match(re);
  if (!m) throw new Error(`no ${re} in the demo's output:\n${out}`);
  return m[1];
};

/** Ctrl-C as a terminal sends it, then: the demo exits 0 and no process it started is left. */
async function interruptAndCheck(run: DemoRun): Promise<void> {
  const groups = field(run.out(), /child process groups: ([\d ]+)\n/)
    .split(" ")
    .map(Number);
  expect(groups.length).toBeGreaterThanOrEqual(1);
  for (const g of groups) expect(groupMembers(g).length).toBeGreaterThan(0);
  process.kill(-run.child.pid!, "SIGINT");
  // npm itself dies of the SIGINT, as in a terminal; the demo (same group) goes on stopping until done.
  await run.exited;
  const deadline = Date.now() + 120_000;
  while (groupMembers(run.child.pid!).length > 0 && Date.now() < deadline) {
    await new Promise(r => setTimeout(r, 250));
  }
  expect(run.out()).toContain("stopped; nothing the demo started is running");
  for (const g of [...groups, run.child.pid!]) expect(groupMembers(g)).toEqual([]);
}

let runner: string;

/** After a failure: Ctrl-C the demo if it still runs, and wait for it. */
async function stopDemo(run: DemoRun): Promise<void> {
  if (run.child.exitCode === null && run.child.signalCode === null) {
    process.kill(-run.child.pid!, "SIGINT");
  }
  await run.exited;
}

/** One object's timeline from the demo journal, through the real CLI. */
function timeline(
  dir: string,
  args: string[],
): { kind: string; recordType: string; note?: string }[] {
  const res = runExample(runner, dir, "krply-demo.db", ["-o", "json", "timeline", ...args]);
  if (res.status !== 0) throw new Error(`krply timeline ${args.join(" ")}: ${res.text}`);
  return (JSON.parse(res.stdout) as { data: { kind: string; recordType: string; note?: string }[] })
    .data;
}
const cliDir = join(root, ".cache", `demo-test-cli-${process.pid}`);
const work = mkdtempSync(join(tmpdir(), "krply-demo-test-"));

beforeAll(() => {
  runner = buildCli(root, cliDir);
});

afterAll(() => {
  rmSync(cliDir, { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
});

describe("npm run demo against a reachable context (the shared API server)", () => {
  let release: (() => void) | undefined;
  afterAll(() => release?.());

  it("records the shop with a real gap, runs the module and the sidecar, prints real CLI output, and Ctrl-C leaves nothing running", async () => {
    release = await acquirePeprDevLock();
    const dir = join(work, "reachable");
    const journal = join(dir, "krply-demo.db");
    const run = startDemo(["--api-port", "0", "--journal", journal], {
      KUBECONFIG: api.kubeconfigs.admin,
    });
    try {
      await waitForLine(run, "krply demo ready", 540_000);
    } catch (err) {
      await stopDemo(run);
      throw err;
    }
    const out = run.out();
    expect(out).toContain(`answers (`);
    expect(out).toMatch(/recorded the shop into .* \(gaps: [1-9]/);

    // The journal holds the workload and the gap (asked through the real CLI).
    const cm = timeline(dir, ["cm/shop-settings", "-n", "shop"]);
    expect(cm.map(r => r.kind)).toContain("gap");
    // The value written while the recorder was paused and compacted away is gone; the relist's is there.
    expect(cm.map(r => r.recordType)).toContain("baseline");
    expect(timeline(dir, ["deploy/web", "-n", "shop"]).map(r => r.note ?? "")).toEqual(
      expect.arrayContaining(["created"]),
    );
    expect(timeline(dir, ["deploy/web", "-n", "shop"]).length).toBeGreaterThanOrEqual(3);
    expect(timeline(dir, ["deploy/cart", "-n", "shop"]).length).toBeGreaterThanOrEqual(2);
    expect(timeline(dir, ["svc/web", "-n", "shop"]).length).toBeGreaterThanOrEqual(2);
    expect(timeline(dir, ["coupon/spring-sale", "-n", "shop"]).length).toBeGreaterThanOrEqual(2);

    // What the demo printed is what the CLI prints (coverage's watermarks and times move with bookmarks).
    for (const args of EXAMPLES) {
      const command = commandLine("krply-demo.db", args);
      const again = runExample(runner, dir, "krply-demo.db", args).text;
      const mask = (s: string) => (args[0] === "coverage" ? s.replace(/\d+/g, "N") : s);
      expect(mask(printedOutput(out, command))).toBe(mask(again));
    }

    // The sidecar serves the journal; the module's webhooks are registered while it runs.
    const apiUrl = field(out, /query sidecar: (http:\/\/127\.0\.0\.1:\d+)/);
    expect(await httpStatus(`${apiUrl}/v1/status`)).toBe(200);
    const hookStatuses = () =>
      Promise.all(PEPR_WEBHOOK_PATHS.map(async p => (await api.request("admin", "GET", p)).status));
    expect(await hookStatuses()).toEqual([200, 200]);
    expect(await peprPortAnswers()).toBe(true);

    await interruptAndCheck(run);
    expect(await httpStatus(`${apiUrl}/v1/health`)).toBe(0);
    expect(await peprPortAnswers()).toBe(false);
    // Both configurations are gone: one left behind would refuse the later test files' writes.
    expect(await hookStatuses()).toEqual([404, 404]);
  }, 720_000);
});

describe("npm run demo with an unreachable context", () => {
  it("starts its own API server, records the shop with a gap, and Ctrl-C stops the server too", async () => {
    const dir = join(work, "unreachable");
    const kubeconfig = join(work, "unreachable.yaml");
    // Port 1 on loopback: nothing listens, so the probe fails at once.
    writeFileSync(
      kubeconfig,
      [
        "apiVersion: v1",
        "kind: Config",
        "clusters: [{name: gone, cluster: {server: 'https://127.0.0.1:1'}}]",
        "users: [{name: u, user: {token: t}}]",
        "contexts: [{name: gone, context: {cluster: gone, user: u}}]",
        "current-context: gone",
      ].join("\n"),
    );
    const journal = join(dir, "krply-demo.db");
    // Without the module here: the first test runs it, and pepr dev's build is the slowest step.
    const run = startDemo(["--api-port", "0", "--journal", journal, "--no-module"], {
      KUBECONFIG: kubeconfig,
    });
    try {
      await waitForLine(run, "krply demo ready", 300_000);
    } catch (err) {
      await stopDemo(run);
      throw err;
    }
    const out = run.out();
    expect(out).toContain("the current context is not reachable");
    const server = field(out, /kube-apiserver: (https:\/\/127\.0\.0\.1:\d+)/);
    expect(server).not.toBe(api.url);
    const kc = field(out, /admin kubeconfig (\S+)\)/);
    expect(timeline(dir, ["cm/shop-settings", "-n", "shop"]).map(r => r.kind)).toContain("gap");

    await interruptAndCheck(run);
    // The demo's API server and its data are gone.
    expect(existsSync(kc)).toBe(false);
  }, 420_000);
});

describe("npm run demo against a cluster that is not a krply harness", () => {
  it("only reads it: records with a read-only user, writes no workload, starts no module", async () => {
    const dir = join(work, "read-only");
    // The shared server, seen as someone's real cluster: no KRPLY_APISERVER_INFO names it, and the
    // context's user may only read, so any write the demo attempted would fail it.
    const run = startDemo(["--api-port", "0", "--journal", join(dir, "krply-demo.db")], {
      KUBECONFIG: api.kubeconfigs.recorder,
      KRPLY_APISERVER_INFO: "",
    });
    try {
      await waitForLine(run, "krply demo ready", 300_000);
    } catch (err) {
      await stopDemo(run);
      throw err;
    }
    const out = run.out();
    expect(out).toContain("recording it read-only");
    expect(out).not.toContain("shop workload");
    expect(out).toContain("module: not started against a real cluster");
    // Recorded all the same: the namespaces the harness creates at start are in the journal.
    const found = runExample(runner, dir, "krply-demo.db", ["-o", "json", "search", "kube-system"]);
    expect(found.status).toBe(0);
    expect(found.stdout).toContain('"kube-system"');
    await interruptAndCheck(run);
  }, 420_000);
});
