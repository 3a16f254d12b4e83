// The sample CLI commands the demo prints with their real output, and the README shows (normalized).
import { spawnSync, execFileSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SHOP_NAMESPACE } from "./shop";

/** The commands, without `krply --store <journal>`. */
export const EXAMPLES: readonly (readonly string[])[] = [
  ["coverage"],
  ["timeline", "deploy/web", "-n", SHOP_NAMESPACE],
  ["timeline", "cm/shop-settings", "-n", SHOP_NAMESPACE],
  ["search", "web"],
  ["who", "-n", SHOP_NAMESPACE, "--since", "1h"],
];

/**
 * The README's subset: answers that stay the same from one recording of the shop to the next, once
 * times and resourceVersions are masked (coverage and status also show watermarks and file sizes).
 */
export const README_EXAMPLES: readonly (readonly string[])[] = EXAMPLES.filter(
  args => args[0] !== "coverage",
);

/** One command as a user types it. */
export function commandLine(store: string, args: readonly string[]): string {
  return ["krply", "--store", store, ...args].join(" ");
}

/**
 * Bundles the CLI the way `npm run build:cli` does, into a folder of its own inside the checkout (the
 * bundle resolves better-sqlite3 from node_modules), and returns a runner script for it.
 */
export function buildCli(root: string, dir: string): string {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  execFileSync(process.execPath, [join(root, "scripts", "build-cli.mjs"), dir], { stdio: "pipe" });
  const runner = join(dir, "run.mjs");
  writeFileSync(runner, 'import("./krply.js").then(m => m.runCli(process.argv));\n');
  return runner;
}

/** What one CLI run printed: stdout, then stderr (warnings about gaps go there). */
export function runExample(
  runner: string,
  cwd: string,
  store: string,
  args: readonly string[],
): { status: number | null; text: string; stdout: string } {
  const res = spawnSync(process.execPath, [runner, "--store", store, ...args], {
    cwd,
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1", KRPLY_LOG_LEVEL: "error" },
    timeout: 60_000,
  });
  return { status: res.status, text: `${res.stdout}${res.stderr}`.trimEnd(), stdout: res.stdout };
}
