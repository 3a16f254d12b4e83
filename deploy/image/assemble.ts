import { execFileSync } from "node:child_process";
import {
  chownSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  realpathSync,
  statSync,
  symlinkSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { IMAGE_LAYOUT, IMAGE_UID, type LayoutEntry } from "./layout";

/** The npm script that produces each build output the image copies. */
const BUILT_BY: Record<string, string> = {
  "dist/api": "npm run build:api",
  "dist/cli": "npm run build:cli",
  "web/dist": "npm run build:web",
};

export interface AssembleOptions {
  /** The repository after `npm run build` (the Docker build context). */
  root: string;
  /** The directory that stands for the image's `/`: the tree goes to <rootfs>/app. */
  rootfs: string;
  /**
   * Stands for the /app/node_modules Pepr's image ships (pepr and its runtime dependencies): each
   * entry is linked in, except what the layout provides, so better-sqlite3 is the image's copy.
   */
  baseNodeModules: string;
  /** Give the tree to the image's user (needs root), as the image's `COPY --chown` does. */
  chown?: boolean;
}

/** Where an entry's source is on this machine: the binding stage's /build is the repository. */
export function sourceOf(root: string, e: LayoutEntry): string {
  return join(root, e.from);
}

/** The layout's sources that are missing, each with the command that builds it. */
export function missingSources(root: string): { path: string; buildWith: string }[] {
  return IMAGE_LAYOUT.filter(e => !existsSync(sourceOf(root, e))).map(e => ({
    path: e.from,
    buildWith: BUILT_BY[e.from] ?? "npm install",
  }));
}

/** Top-level package names the layout puts under /app/node_modules itself. */
function layoutPackages(): Set<string> {
  const out = new Set<string>();
  for (const e of IMAGE_LAYOUT) {
    const m = /^\/app\/node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(e.to);
    if (m) out.add(m[1].split("/")[0]);
  }
  return out;
}

function chownTree(path: string): void {
  chownSync(path, IMAGE_UID, IMAGE_UID);
  if (lstatSync(path).isDirectory()) {
    for (const name of readdirSync(path)) chownTree(join(path, name));
  }
}

/**
 * Builds the image's /app under `rootfs` from the build output: Pepr's node_modules (linked), then
 * every layout entry copied to its destination. Returns the /app directory.
 */
export function assembleApp(opts: AssembleOptions): string {
  const missing = missingSources(opts.root);
  if (missing.length > 0) {
    throw new Error(
      `the image's sources are not built: ${missing.map(m => `${m.path} (${m.buildWith})`).join(", ")}`,
    );
  }
  const app = join(opts.rootfs, "app");
  const modules = join(app, "node_modules");
  mkdirSync(modules, { recursive: true });
  const ours = layoutPackages();
  for (const name of readdirSync(opts.baseNodeModules)) {
    if (name.startsWith(".") || ours.has(name)) continue;
    symlinkSync(realpathSync(join(opts.baseNodeModules, name)), join(modules, name));
  }
  for (const e of IMAGE_LAYOUT) {
    const to = join(opts.rootfs, e.to);
    mkdirSync(dirname(to), { recursive: true });
    cpSync(sourceOf(opts.root, e), to, { recursive: e.dir, dereference: true });
  }
  if (opts.chown) {
    // Links into the shared node_modules stay root's; only what the image owns changes hands.
    chownSync(app, IMAGE_UID, IMAGE_UID);
    chownSync(modules, IMAGE_UID, IMAGE_UID);
    for (const name of readdirSync(app)) {
      if (name !== "node_modules") chownTree(join(app, name));
    }
    for (const name of ours) chownTree(join(modules, name));
  }
  return app;
}

/** The newest modification time under `path` of TypeScript sources (tests excluded); 0 if none. */
function newestSource(path: string): number {
  if (!existsSync(path)) return 0;
  if (!statSync(path).isDirectory()) return statSync(path).mtimeMs;
  let newest = 0;
  for (const e of readdirSync(path, { withFileTypes: true, recursive: true })) {
    if (!e.isFile() || !/\.tsx?$/.test(e.name) || e.name.endsWith(".test.ts")) continue;
    newest = Math.max(newest, statSync(join(e.parentPath, e.name)).mtimeMs);
  }
  return newest;
}

/**
 * Builds what the image holds when it is missing or older than its sources, so a test never runs
 * yesterday's bundle: the module and its chart (pepr build, minutes), the sidecar and CLI bundles
 * and the UI (seconds each).
 */
export function buildStaleSources(root: string): void {
  const at = (p: string) => join(root, p);
  const built = (p: string) => (existsSync(at(p)) ? statSync(at(p)).mtimeMs : 0);
  const src = Math.max(newestSource(at("src")), newestSource(at("capabilities")));
  const npm = (script: string, timeout: number) =>
    execFileSync("npm", ["run", script], { cwd: root, stdio: "pipe", timeout });
  const module = Math.max(src, newestSource(at("pepr.ts")), newestSource(at("deploy/finalize")));
  if (Math.min(built("dist/krply-chart/values.yaml"), built("dist/pepr-krply.js")) < module) {
    npm("build:module", 840_000);
  }
  if (built("dist/api/main.js") < src) npm("build:api", 300_000);
  if (built("dist/cli/krply.js") < src) npm("build:cli", 300_000);
  if (built("web/dist/index.html") < Math.max(src, newestSource(at("web/src")))) {
    npm("build:web", 300_000);
  }
  for (const m of missingSources(root)) {
    execFileSync("sh", ["-c", m.buildWith], { cwd: root, stdio: "pipe", timeout: 300_000 });
  }
}
