// The krply image's file layout, in one place: deploy/Dockerfile copies exactly these entries (its
// test checks each COPY line against this list), and assemble.ts builds the same /app tree on this
// machine from the build output, where no container engine runs (test/e2e/image-layout.test.ts).

/** The Pepr version the module is built with; the image must run the same controller. */
export const PEPR_VERSION = "1.1.4";

/**
 * Pepr's controller image at that version: `pepr build` writes this image into the manifests
 * unless --custom-image names ours, which starts FROM it.
 */
export const PEPR_CONTROLLER_IMAGE = `ghcr.io/defenseunicorns/pepr/controller:v${PEPR_VERSION}`;

/**
 * What that image runs. Pepr 1.1.4's Dockerfile (tag v1.1.4) takes its final stage FROM
 * docker.io/library/node@sha256:e8e882c6…, the digest of node:24.5.0-alpine3.22: Node 24.5.0 on
 * musl libc, whose addons need NODE_MODULE_VERSION 137. The binding stage builds on that same
 * digest, so the addon fits the runtime's ABI and libc by construction.
 */
export const CONTROLLER_RUNTIME = {
  node: "24.5.0",
  nodeModuleVersion: 137,
  libc: "musl",
  alpine: "3.22",
  image:
    "docker.io/library/node:24.5.0-alpine3.22@sha256:e8e882c692a08878d55ec8ff6c5a4a71b3edca25eda0af4406e2a160d8a93cf2",
} as const;

/** Pepr's image runs as this user and owns /app by it; so does everything we add. */
export const IMAGE_UID = 65532;

/** Where the image keeps better-sqlite3's addon; the image sets KRPLY_SQLITE_BINDING to it. */
export const SQLITE_BINDING_PATH = "/app/lib/better_sqlite3.node";

/**
 * The journal's writer thread script, which `npm run build:cli` writes beside the CLI's chunks. The
 * recorder runs in the module Pepr's controller unpacks into /app, where no script sits beside it, so
 * the image names this one with KRPLY_WRITER_SCRIPT.
 */
export const WRITER_SCRIPT_PATH = "/app/dist/cli/chunks/writer-worker.js";

/** The environment the image sets for every container it runs. */
export const IMAGE_ENV: Readonly<Record<string, string>> = {
  KRPLY_SQLITE_BINDING: SQLITE_BINDING_PATH,
  KRPLY_WRITER_SCRIPT: WRITER_SCRIPT_PATH,
};

/** Where the binding stage installs better-sqlite3 (its /build/node_modules). */
export const SQLITE_STAGE_DIR = "/build";

/**
 * One thing the image adds to Pepr's. `context`: a path of the build context (the repository after
 * `npm run build`). `sqlite`: a path under the binding stage's /build, which on this machine is the
 * repository root (its node_modules/better-sqlite3 has the same files; only the addon's ABI differs).
 */
export interface LayoutEntry {
  stage: "context" | "sqlite";
  from: string;
  to: string;
  /** A directory (copied whole) or a file. */
  dir: boolean;
  why: string;
}

export const IMAGE_LAYOUT: readonly LayoutEntry[] = [
  {
    stage: "sqlite",
    from: "node_modules/better-sqlite3/package.json",
    to: "/app/node_modules/better-sqlite3/package.json",
    dir: false,
    why: "the sidecar and CLI bundles require better-sqlite3 (external to esbuild)",
  },
  {
    stage: "sqlite",
    from: "node_modules/better-sqlite3/lib",
    to: "/app/node_modules/better-sqlite3/lib",
    dir: true,
    why: "its JavaScript; the addon is named by nativeBinding, so `bindings` is never asked",
  },
  {
    stage: "sqlite",
    from: "node_modules/better-sqlite3/build/Release/better_sqlite3.node",
    to: SQLITE_BINDING_PATH,
    dir: false,
    why: "the addon built for the controller's Node ABI and musl (KRPLY_SQLITE_BINDING)",
  },
  {
    stage: "context",
    from: "dist/api",
    to: "/app/dist/api",
    dir: true,
    why: "the query sidecar (main.js) and its query workers (worker.js)",
  },
  {
    stage: "context",
    from: "dist/cli",
    to: "/app/dist/cli",
    dir: true,
    why: "the bundled CLI, for `kubectl exec ... -- node /app/bin/krply.js`",
  },
  {
    stage: "context",
    from: "bin/krply.js",
    to: "/app/bin/krply.js",
    dir: false,
    why: "the CLI's launcher; it runs ../dist/cli/krply.js",
  },
  {
    stage: "context",
    from: "web/dist",
    to: "/app/web/dist",
    dir: true,
    why: "the web UI the sidecar serves (it looks in ../../web/dist from dist/api)",
  },
];

/** What the chart's containers run from the image (dist/krply-chart watcher-deployment.yaml). */
export const IMAGE_ENTRIES = {
  /** The watcher: Pepr's controller, which unpacks the module from /app/load and forks it. */
  controller: "/app/node_modules/pepr/dist/controller.js",
  /** The query sidecar container. */
  sidecar: "/app/dist/api/main.js",
  /** The CLI. */
  cli: "/app/bin/krply.js",
} as const;
