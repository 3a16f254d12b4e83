import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  createWriteStream,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  renameSync,
} from "node:fs";
import { join, resolve } from "node:path";

/** test/apiserver, where the Go module lives. */
export const apiServerSourceDir = __dirname;

const repoRoot = resolve(__dirname, "..", "..");
const binaryName = "krply-apiserver";

/**
 * Keys the cache by go.sum and also by go.mod and the Go sources: keyed by go.sum alone, an edit to main.go
 * would keep running a stale binary.
 */
export function apiServerBuildKey(): string {
  const hash = createHash("sha256");
  const files = [
    "go.sum",
    "go.mod",
    ...readdirSync(apiServerSourceDir)
      .filter(f => f.endsWith(".go"))
      .sort(),
  ];
  for (const file of files) {
    hash.update(`${file}\0`);
    hash.update(readFileSync(join(apiServerSourceDir, file)));
  }
  return hash.digest("hex").slice(0, 16);
}

/** Where the binary for the current sources is (or will be) cached, under the git-ignored .cache/. */
export function apiServerBinaryPath(): string {
  return join(repoRoot, ".cache", "apiserver", apiServerBuildKey(), binaryName);
}

function assertGoAvailable(): void {
  const probe = spawnSync("go", ["version"], { encoding: "utf8" });
  if (probe.error || probe.status !== 0) {
    throw new Error(
      "Go is not available (`go version` failed: " +
        `${probe.error?.message ?? probe.stderr.trim()}). test/apiserver builds a real kube-apiserver from Go ` +
        "modules; install Go >= 1.26 (https://go.dev/dl) and make sure `go` is on PATH, then run " +
        "`npm run apiserver:build`.",
    );
  }
}

export interface BuildOptions {
  /** Also copy the go toolchain's output to this process's stderr (the log file always gets it). */
  echo?: boolean;
}

let inFlight: Promise<string> | undefined;

/** Builds the harness binary unless a binary for the current sources is cached, and returns its path. */
export function ensureApiServerBinary(options: BuildOptions = {}): Promise<string> {
  const binary = apiServerBinaryPath();
  if (existsSync(binary)) return Promise.resolve(binary);
  inFlight ??= build(binary, options).finally(() => {
    inFlight = undefined;
  });
  return inFlight;
}

async function build(binary: string, options: BuildOptions): Promise<string> {
  assertGoAvailable();
  const dir = resolve(binary, "..");
  mkdirSync(dir, { recursive: true });
  const logPath = join(dir, "build.log");
  const log = createWriteStream(logPath);
  // A per-process temp name then rename: two runners building at once each publish a whole binary.
  const tmp = `${binary}.${process.pid}.tmp`;
  const child = spawn("go", ["build", "-trimpath", "-o", tmp, "."], {
    cwd: apiServerSourceDir,
    env: { ...process.env, CGO_ENABLED: "0" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  for (const stream of [child.stdout, child.stderr]) {
    stream.on("data", (chunk: Buffer) => {
      log.write(chunk);
      if (options.echo) process.stderr.write(chunk);
    });
  }
  const code = await new Promise<number | null>((done, fail) => {
    child.on("error", fail);
    child.on("close", done);
  });
  await new Promise<void>(done => log.end(done));
  if (code !== 0) {
    const tail = readFileSync(logPath, "utf8").split("\n").slice(-40).join("\n");
    throw new Error(`go build of test/apiserver failed (exit ${code}); log: ${logPath}\n${tail}`);
  }
  renameSync(tmp, binary);
  return binary;
}

if (require.main === module) {
  const started = Date.now();
  const cached = existsSync(apiServerBinaryPath());
  ensureApiServerBinary({ echo: true }).then(
    binary => {
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      console.log(`${cached ? "cached" : "built"} ${binary} in ${seconds}s`);
    },
    (err: unknown) => {
      console.error(err instanceof Error ? err.message : err);
      process.exit(1);
    },
  );
}
