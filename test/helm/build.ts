import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { createWriteStream, existsSync, mkdirSync, readFileSync, renameSync } from "node:fs";
import { join, resolve } from "node:path";

/** test/helm: a Go module that pins helm, so .ci/run builds it from the module proxy. */
const sourceDir = __dirname;
const repoRoot = resolve(__dirname, "..", "..");

/** Keyed by the module files, so a version bump in go.mod builds a new binary beside the old one. */
export function helmBinaryPath(): string {
  const hash = createHash("sha256");
  for (const file of ["go.mod", "go.sum", "tools.go"]) {
    hash.update(`${file}\0`);
    hash.update(readFileSync(join(sourceDir, file)));
  }
  return join(repoRoot, ".cache", "helm", hash.digest("hex").slice(0, 16), "helm");
}

/** Builds helm unless a binary for the pinned version is cached, and returns its path. */
export async function ensureHelm(echo = false): Promise<string> {
  const binary = helmBinaryPath();
  if (existsSync(binary)) return binary;
  mkdirSync(resolve(binary, ".."), { recursive: true });
  const logPath = `${binary}.build.log`;
  const log = createWriteStream(logPath);
  // A per-process temp name then rename: two runners building at once each publish a whole binary.
  const tmp = `${binary}.${process.pid}.tmp`;
  const child = spawn("go", ["build", "-trimpath", "-o", tmp, "helm.sh/helm/v3/cmd/helm"], {
    cwd: sourceDir,
    env: { ...process.env, CGO_ENABLED: "0" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  for (const stream of [child.stdout, child.stderr]) {
    stream.on("data", (chunk: Buffer) => {
      log.write(chunk);
      if (echo) process.stderr.write(chunk);
    });
  }
  const code = await new Promise<number | null>((done, fail) => {
    child.on("error", err => fail(new Error("could not run `go build` for helm", { cause: err })));
    child.on("close", done);
  });
  await new Promise<void>(done => log.end(done));
  if (code !== 0) throw new Error(`go build of helm failed (exit ${code}); log: ${logPath}`);
  renameSync(tmp, binary);
  return binary;
}

if (require.main === module) {
  const started = Date.now();
  const cached = existsSync(helmBinaryPath());
  ensureHelm(true).then(
    binary =>
      console.log(
        `${cached ? "cached" : "built"} ${binary} in ${((Date.now() - started) / 1000).toFixed(1)}s`,
      ),
    (err: unknown) => {
      console.error(err instanceof Error ? err.message : err);
      process.exit(1);
    },
  );
}
