// The CLI as `npm run build` ships it (scripts/build-cli.mjs: CommonJS chunks, better-sqlite3's
// addon and client-node left to node_modules), so a benchmark's RSS is that of the shipped `krply record`:
// running the sources through tsx would add the toolchain, one big bundle would load every chunk.
import { execFileSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * Builds the shipped CLI into the repo's dist/ (so node_modules resolve); returns its runner. With
 * `names`, functions keep their names, for a CPU profile (the same code otherwise).
 */
export function shippedCli(opts: { names?: boolean } = {}): {
  runner: string;
  cleanup: () => void;
} {
  const root = join(__dirname, "..");
  const out = join(root, "dist", `bench-cli-${process.pid}`);
  const script = join(root, "scripts", "build-cli.mjs");
  execFileSync(process.execPath, [script, out, ...(opts.names ? ["--names"] : [])], {
    stdio: "inherit",
  });
  const runner = join(out, "run.mjs");
  writeFileSync(runner, 'import { runCli } from "./krply.js";\nawait runCli(process.argv);\n');
  return { runner, cleanup: () => rmSync(out, { recursive: true, force: true }) };
}
