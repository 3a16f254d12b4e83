// Builds the shipped CLI and query sidecar into a folder of their own inside the checkout (so the
// bundles resolve better-sqlite3 from node_modules, and parallel test files never race on dist/),
// and runs them as separate processes: the tests exercise what users run.
import { spawn, spawnSync, execFileSync, type ChildProcess } from "node:child_process";
import { chmodSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildSync } from "esbuild";
import { freePort } from "./net";

const ROOT = join(__dirname, "..", "..");

export interface CliRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

export interface BuiltTools {
  dir: string;
  /** esbuild's metafile of the CLI build: which sources went into which chunk. */
  cliMetafile: string;
  /** Folder with `krply` and `kubectl-krply` executables (krew naming). */
  binDir: string;
  /** Runs the built krply with args; env is added to process.env. */
  krply(args: string[], env?: Record<string, string>): CliRun;
  /** Runs any command with binDir first on PATH. */
  run(cmd: string, args: string[], env?: Record<string, string>): CliRun;
  cleanup(): void;
}

/** Builds dist-like CLI and sidecar bundles into .cache/test-build-*. */
export function buildTools(opts: { api?: boolean } = {}): BuiltTools {
  const dir = join(ROOT, ".cache", `test-build-${process.pid}-${Date.now().toString(36)}`);
  mkdirSync(dir, { recursive: true });
  const cliMetafile = join(dir, "cli-meta.json");
  execFileSync(
    process.execPath,
    [join(ROOT, "scripts", "build-cli.mjs"), join(dir, "cli"), `--metafile=${cliMetafile}`],
    { stdio: "pipe" },
  );
  if (opts.api) {
    buildSync({
      entryPoints: [join(ROOT, "src", "api", "main.ts"), join(ROOT, "src", "api", "worker.ts")],
      bundle: true,
      platform: "node",
      target: "node20",
      outdir: join(dir, "api"),
      external: ["better-sqlite3", "tsx"],
      logLevel: "error",
    });
  }
  const binDir = join(dir, "bin");
  mkdirSync(binDir);
  // As bin/krply.js runs it.
  const runner = `#!${process.execPath}\nrequire(${JSON.stringify(join(dir, "cli", "krply.js"))}).runCli(process.argv);\n`;
  for (const name of ["krply", "kubectl-krply"]) {
    writeFileSync(join(binDir, name), runner);
    chmodSync(join(binDir, name), 0o755);
  }
  const run = (cmd: string, args: string[], env: Record<string, string> = {}): CliRun => {
    const r = spawnSync(cmd, args, {
      encoding: "utf8",
      // The CLI's code cache goes with the build, not into the user's cache folder.
      env: {
        ...process.env,
        PATH: `${binDir}:${process.env.PATH}`,
        KRPLY_CLI_CACHE: join(dir, "cli-cache"),
        ...env,
      },
      timeout: 60_000,
    });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  return {
    dir,
    cliMetafile,
    binDir,
    run,
    krply: (args, env) => run(process.execPath, [join(binDir, "krply"), ...args], env),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export interface RunningCli {
  /** What it wrote to stdout and stderr so far. */
  output(): string;
  exited(): boolean;
  /**
   * Resolves once `krply record` says it records (its "Ctrl-C stops" line); rejects, with its output,
   * when it exits first or stays silent for timeoutMs.
   */
  recording(timeoutMs?: number): Promise<void>;
  /** Sends SIGINT (Ctrl-C) unless it has exited; resolves with its exit code. */
  stop(): Promise<number | null>;
}

/** The line `krply record` prints once its streams start (src/cli/commands/record.ts). */
const RECORDING = "Ctrl-C stops";

/** The built krply running in the background (`krply record`) until stop() sends it Ctrl-C. */
export function startKrply(
  tools: BuiltTools,
  args: string[],
  env: Record<string, string> = {},
): RunningCli {
  const child = spawn(process.execPath, [join(tools.binDir, "krply"), ...args], {
    env: { ...process.env, KRPLY_CLI_CACHE: join(tools.dir, "cli-cache"), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.on("data", d => (out += String(d)));
  child.stderr.on("data", d => (out += String(d)));
  const exited = new Promise<number | null>(resolve => child.once("exit", code => resolve(code)));
  return {
    output: () => out,
    exited: () => child.exitCode !== null || child.signalCode !== null,
    recording: (timeoutMs = 60_000) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (!out.includes(RECORDING)) return;
          settle();
          resolve();
        };
        const failed = () => {
          settle();
          reject(new Error(`krply record exited: ${out}`));
        };
        const timer = setTimeout(() => {
          settle();
          reject(new Error(`timed out waiting for krply record to start: ${out}`));
        }, timeoutMs);
        const settle = () => {
          clearTimeout(timer);
          child.stdout.off("data", check);
          child.stderr.off("data", check);
          child.off("exit", failed);
        };
        child.stdout.on("data", check);
        child.stderr.on("data", check);
        child.once("exit", failed);
        if (child.exitCode !== null || child.signalCode !== null) failed();
        else check();
      }),
    stop: async (): Promise<number | null> => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGINT");
      return exited;
    },
  };
}

// Kept here too: benchmarks and tests import it with the built tools.
export { freePort };

export interface Sidecar {
  url: string;
  child: ChildProcess;
  /** What it wrote to stderr and stdout so far (for failure messages). */
  output(): string;
  stop(): Promise<void>;
}

/** Starts the built sidecar (dist/api/main.js) on a free loopback port and waits until it is ready. */
export async function startSidecar(
  tools: BuiltTools,
  env: Record<string, string>,
): Promise<Sidecar> {
  const port = await freePort();
  const child = spawn(process.execPath, [join(tools.dir, "api", "main.js")], {
    env: {
      ...process.env,
      KRPLY_API_HOST: "127.0.0.1",
      KRPLY_API_PORT: String(port),
      KRPLY_API_WORKERS: "1",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout!.on("data", d => (out += String(d)));
  child.stderr!.on("data", d => (out += String(d)));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`sidecar exited ${child.exitCode}: ${out}`);
    try {
      const res = await fetch(`${url}/v1/ready`);
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`sidecar not ready after 30 s: ${out}`);
    }
    await new Promise(r => setTimeout(r, 100));
  }
  return {
    url,
    child,
    output: () => out,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise(r => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    },
  };
}
