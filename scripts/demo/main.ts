// `npm run demo`: records a cluster into a local journal and serves it, with the real module, the query
// sidecar and sample CLI output; Ctrl-C stops everything it started. See README "On a fresh machine".
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import type { ApiServer } from "../../test/apiserver";
import { readApiServerInfo, type ApiServerInfo } from "../../test/apiserver/types";
import { DefaultResources } from "../../src/kube/default-resources";
import type { Recorder } from "../../src/watch/recorder";
import { Children } from "./children";
import { ShopWriter, probeCluster } from "./cluster";
import { EXAMPLES, buildCli, commandLine, runExample } from "./examples";
import { PEPR_WEBHOOK_PATHS, removeStage, runModule } from "./module";
import {
  DEMO_USAGE,
  buildProgressLine,
  isHarnessServer,
  parseDemoArgs,
  type DemoOptions,
} from "./options";
import { recordShop, startRecorder } from "./record";
import { until } from "./wait";
import { freePort, httpStatus, startSidecar, uiLine, waitForSidecar } from "./sidecar";

const root = resolve(__dirname, "..", "..");
const say = (line: string) => process.stdout.write(`${line}\n`);

/** Everything the demo holds, released in reverse on the way out. */
interface Held {
  children: Children;
  recorder?: Recorder;
  server?: ApiServer;
  writer?: ShopWriter;
  webhooksOn?: boolean;
  stage?: string;
  work: string;
  cliDir: string;
}

/** The demo's own API server: built (with a progress line) and started in the work folder. */
async function ownHarness(held: Held): Promise<ApiServerInfo> {
  const { ensureApiServerBinary, startApiServer } = await import("../../test/apiserver");
  const { apiServerBinaryPath } = await import("../../test/apiserver/build");
  if (!existsSync(apiServerBinaryPath())) {
    const started = Date.now();
    say(buildProgressLine(0));
    const timer = setInterval(() => say(buildProgressLine(Date.now() - started)), 15_000);
    try {
      await ensureApiServerBinary();
    } finally {
      clearInterval(timer);
    }
    say(
      `built the harness in ${((Date.now() - started) / 1000).toFixed(0)} s (cached from now on)`,
    );
  }
  say("starting kube-apiserver and etcd on 127.0.0.1 ...");
  held.server = await startApiServer({ dataDir: join(held.work, "apiserver") });
  say(`kube-apiserver ready at ${held.server.url} in ${held.server.startMillis} ms`);
  return held.server.info;
}

async function run(opts: DemoOptions, held: Held): Promise<void> {
  const journalPath = resolve(opts.journal);
  mkdirSync(dirname(journalPath), { recursive: true });
  for (const suffix of ["", "-wal", "-shm"]) rmSync(`${journalPath}${suffix}`, { force: true });

  say("probing the current kubeconfig context ...");
  const probe = await probeCluster(
    { kubeconfig: opts.kubeconfig, context: opts.context },
    opts.probeTimeoutMs,
  );
  let harness: ApiServerInfo | undefined;
  if (probe.reachable) {
    const infoFile = process.env.KRPLY_APISERVER_INFO;
    const shared = infoFile && existsSync(infoFile) ? readApiServerInfo(infoFile) : undefined;
    say(`context ${probe.context} at ${probe.server} answers (${probe.version})`);
    if (shared && isHarnessServer(probe.server, shared.server)) harness = shared;
  } else {
    say(`the current context is not reachable (${probe.reason}); using a local API server instead`);
    harness = await ownHarness(held);
  }

  const notes: string[] = [];
  if (harness) {
    // A throwaway API server of krply's own: the shop workload and the module may write to it.
    held.writer = await ShopWriter.open(harness.kubeconfigs.admin);
    const info = harness;
    const recording = await recordShop(
      {
        journalPath,
        recorderKubeconfig: info.kubeconfigs.recorder,
        writer: held.writer,
        compact: async () => {
          const { compactApiServer } = await import("../../test/apiserver/control-client");
          return compactApiServer(info.controlUrl);
        },
      },
      say,
    );
    held.recorder = recording.recorder;
    say(`recorded the shop into ${journalPath} (gaps: ${recording.gaps})`);
    if (opts.module) {
      held.stage = join(held.work, "module");
      held.webhooksOn = true;
      const dev = await runModule(held.children, held.writer, {
        root,
        stage: held.stage,
        adminKubeconfig: info.kubeconfigs.admin,
        journalPath: join(held.work, "module.db"),
        say,
      });
      notes.push(
        `module: pepr dev (pid ${dev.pid}) serves watch, admission and schedule; webhooks at https://localhost:3000`,
      );
    } else notes.push("module: skipped (--no-module)");
  } else {
    // Someone's real cluster: read it, never write to it.
    say(
      "recording it read-only (no workload, no webhooks: the demo never writes to a real cluster)",
    );
    held.recorder = await startRecorder({
      journalPath,
      kubeconfig: opts.kubeconfig,
      context: opts.context,
      namespaces: [],
      resources: [...DefaultResources],
    });
    // The first answers should hold each resource's baseline: wait until no stream is still listing.
    const recorder = held.recorder;
    await until(
      "the first lists",
      async () =>
        recorder.status().length > 0 &&
        recorder.status().every(s => s.phase === "watching" || s.phase === "unavailable"),
      120_000,
    );
    notes.push("module: not started against a real cluster (pepr dev would install webhooks)");
  }

  const port = opts.apiPort === 0 ? await freePort() : opts.apiPort;
  const apiUrl = `http://127.0.0.1:${port}`;
  if ((await httpStatus(`${apiUrl}/v1/health`)) !== 0) {
    throw new Error(`port ${port} is taken; choose another with --api-port`);
  }
  const sidecar = startSidecar(held.children, { root, journalPath, port });
  await waitForSidecar(sidecar, apiUrl);

  const runner = buildCli(root, held.cliDir);
  const store = basename(journalPath);
  say("\nsample CLI commands, run against the demo journal:");
  for (const args of EXAMPLES) {
    const out = runExample(runner, dirname(journalPath), store, args);
    say(`\n$ ${commandLine(store, args)}\n${out.text}`);
  }
  say("");
  say(`journal: ${journalPath}`);
  say(`query sidecar: ${apiUrl} (pid ${sidecar.pid}; try ${apiUrl}/v1/status)`);
  say(uiLine(root, apiUrl));
  for (const n of notes) say(n);
  if (held.server)
    say(
      `kube-apiserver: ${held.server.url} (pid ${held.server.info.pid}; admin kubeconfig ${held.server.kubeconfigs.admin})`,
    );
  say(
    `child process groups: ${[...held.children.pids(), ...(held.server ? [held.server.info.pid] : [])].join(" ")}`,
  );
  say("krply demo ready; Ctrl-C stops every process it started");
}

/** Stops everything, newest first; each step runs even when an earlier one fails. */
async function release(held: Held): Promise<void> {
  const steps: [string, () => Promise<unknown>][] = [
    ["the recorder", async () => held.recorder?.stop()],
    [
      "the module's webhooks",
      async () => {
        if (!held.webhooksOn || !held.writer) return;
        for (const path of PEPR_WEBHOOK_PATHS) await held.writer.remove(path);
      },
    ],
    ["child processes", () => held.children.stopAll()],
    ["the API server", async () => held.server?.dispose()],
    ["the writer", async () => held.writer?.close()],
    [
      "temporary files",
      async () => {
        if (held.stage) removeStage(held.stage);
        rmSync(held.cliDir, { recursive: true, force: true });
        rmSync(held.work, { recursive: true, force: true });
      },
    ],
  ];
  for (const [what, step] of steps) {
    await step().catch((err: unknown) =>
      process.stderr.write(`krply demo: stopping ${what} failed: ${(err as Error).message}\n`),
    );
  }
}

export async function main(argv: string[]): Promise<number> {
  let opts: DemoOptions;
  try {
    opts = parseDemoArgs(argv);
  } catch (err) {
    process.stderr.write(`krply demo: ${(err as Error).message}\n`);
    return 2;
  }
  if (opts.help) {
    say(DEMO_USAGE);
    return 0;
  }
  const held: Held = {
    children: new Children(),
    work: mkdtempSync(join(tmpdir(), "krply-demo-")),
    cliDir: join(root, ".cache", `demo-cli-${process.pid}`),
  };
  // A crash path that skips release() still takes the children down (the harness exits with us).
  process.on("exit", () => held.children.killAllNow());
  let stopping: Promise<void> | undefined;
  let firstSignalAt = 0;
  const stopped = new Promise<number>(done => {
    const stop = (signal: NodeJS.Signals) => {
      if (stopping) {
        // A terminal's Ctrl-C reaches npm and us, and npm passes it on too: the same press arrives twice.
        // A second press, seconds later, means stop waiting.
        if (Date.now() - firstSignalAt < 3000) return;
        say("second signal: killing every process the demo started");
        held.children.killAllNow();
        process.exit(130);
      }
      firstSignalAt = Date.now();
      say(`\n${signal}: stopping the demo ...`);
      stopping = release(held).then(() => {
        say("stopped; nothing the demo started is running");
        done(0);
      });
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
  // A Ctrl-C in the middle of a step ends the demo there; that step's own failure is then not news.
  const running = run(opts, held).then(
    () => undefined,
    (err: unknown) => err as Error,
  );
  const failed = await Promise.race([running, stopped.then(() => undefined)]);
  if (failed && !stopping) {
    const cause = failed.cause instanceof Error ? `: ${failed.cause.message}` : "";
    process.stderr.write(`krply demo: ${failed.message}${cause}\n`);
    await release(held);
    return 1;
  }
  return stopped;
}
