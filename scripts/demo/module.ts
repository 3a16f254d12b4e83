// The real module under `pepr dev`: every capability (watch, admission, schedule) in one local process,
// its webhooks registered with the demo's API server, which calls them back on this machine.
import {
  cpSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { request } from "node:https";
import { join } from "node:path";
import { parse } from "yaml";
import type { Child, Children } from "./children";
import type { ShopWriter } from "./cluster";
import { until } from "./wait";

/** pepr dev's webhook server port; Pepr fixes it. */
export const PEPR_DEV_PORT = 3000;

/**
 * The webhook host. Pepr's dev certificate names the host as a DNS SAN only, and the API server (Go)
 * matches an IP address against IP SANs only, so `--host 127.0.0.1` fails TLS verification; the
 * loopback name stays on this machine just the same (test/e2e/replay-gate.test.ts does the same).
 */
export const PEPR_DEV_HOST = "localhost";

/** Resolves true when https://127.0.0.1:3000/healthz answers at all: something serves the port. */
export function peprPortAnswers(): Promise<boolean> {
  return new Promise(resolve => {
    const req = request(
      {
        host: "127.0.0.1",
        port: PEPR_DEV_PORT,
        path: "/healthz",
        rejectUnauthorized: false,
        timeout: 2000,
      },
      res => {
        res.resume();
        resolve(true);
      },
    );
    req.on("error", () => resolve(false));
    req.on("timeout", () => req.destroy());
    req.end();
  });
}

/**
 * A copy of the module for `pepr dev` to build: its sources only, with a tsconfig over them and an
 * ESLint config that lints nothing. `pepr dev` lints and type-checks the folder it runs in, which over
 * the whole repository (tests, benchmarks) takes minutes.
 */
export function stageModule(root: string, stage: string): void {
  mkdirSync(stage, { recursive: true });
  for (const file of ["package.json", "pepr.ts"]) cpSync(join(root, file), join(stage, file));
  for (const dir of ["capabilities", "src"]) {
    cpSync(join(root, dir), join(stage, dir), {
      recursive: true,
      filter: from => !from.endsWith(".test.ts"),
    });
  }
  symlinkSync(realpathSync(join(root, "node_modules")), join(stage, "node_modules"));
  const { compilerOptions } = JSON.parse(readFileSync(join(root, "tsconfig.json"), "utf8")) as {
    compilerOptions: Record<string, unknown>;
  };
  writeFileSync(
    join(stage, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: { ...compilerOptions, types: ["node"] },
      include: ["pepr.ts", "capabilities/**/*.ts", "src/**/*.ts"],
    }),
  );
  writeFileSync(join(stage, "eslint.config.mjs"), 'export default [{ ignores: ["**/*"] }];\n');
}

/** Removes the staged copy; the node_modules link goes first so nothing reaches into the real one. */
export function removeStage(stage: string): void {
  try {
    unlinkSync(join(stage, "node_modules"));
  } catch {
    // Never staged, or already removed: nothing below can reach node_modules.
  }
  rmSync(stage, { recursive: true, force: true });
}

/** Starts `pepr dev` on the staged module, recording into its own journal (the demo's has its recorder). */
export function startPeprDev(
  children: Children,
  opts: { root: string; stage: string; adminKubeconfig: string; journalPath: string },
): Child {
  return children.spawn(
    "pepr dev",
    join(opts.root, "node_modules", ".bin", "pepr"),
    ["dev", "--host", PEPR_DEV_HOST, "--yes"],
    {
      cwd: opts.stage,
      env: {
        ...process.env,
        KUBECONFIG: opts.adminKubeconfig,
        LOG_LEVEL: "info",
        KRPLY_LOG_LEVEL: "warn",
        KRPLY_JOURNAL: opts.journalPath,
        KRPLY_RESOURCES: "deployments,configmaps,services",
        KRPLY_NAMESPACES: "shop",
        // pepr dev cannot add the chart's objectSelector; a list keeps its webhook off Pepr's own CRD.
        KRPLY_GATE_GROUPS: "core,apps",
        KRPLY_METRICS_PORT: "off",
      },
    },
  );
}

/** The webhook configurations `pepr dev` registers; without the module they would refuse writes. */
export const PEPR_WEBHOOK_PATHS = [
  "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/pepr-krply",
  "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/pepr-krply",
];

/**
 * Installs the ReplayPlan CRD the module serves, stages the module and starts `pepr dev`; resolves once
 * its webhooks answer. The caller deletes PEPR_WEBHOOK_PATHS afterwards, whatever happened.
 */
export async function runModule(
  children: Children,
  writer: ShopWriter,
  opts: {
    root: string;
    stage: string;
    adminKubeconfig: string;
    journalPath: string;
    say: (line: string) => void;
  },
): Promise<Child> {
  if (await peprPortAnswers()) {
    throw new Error(
      "port 3000 is taken (another `pepr dev`?); stop it, or run the demo with --no-module",
    );
  }
  const crd = parse(
    readFileSync(join(opts.root, "deploy", "crds", "replayplan.yaml"), "utf8"),
  ) as object;
  await writer.applyObject(
    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/replayplans.krply.dev",
    crd,
  );
  stageModule(opts.root, opts.stage);
  opts.say(
    "starting the module under `pepr dev` (it builds first: about a minute, longer on a busy machine) ...",
  );
  const dev = startPeprDev(children, opts);
  const started = Date.now();
  let ended = false;
  void dev.exited.then(() => (ended = true));
  const timer = setInterval(
    () => opts.say(`  pepr dev: ${Math.round((Date.now() - started) / 1000)} s ...`),
    15_000,
  );
  try {
    await until(
      "pepr dev to serve its webhooks",
      async () => {
        if (ended) throw new Error(`pepr dev exited:\n${dev.output().slice(-4000)}`);
        return peprPortAnswers();
      },
      300_000,
    );
    // Its server answers before the admission routes are mounted: a dry-run ReplayPlan passes the webhooks.
    await until(
      "the module's webhooks to answer",
      async () => (await writer.dryRunPlan()) === 201,
      120_000,
    );
  } finally {
    clearInterval(timer);
  }
  return dev;
}
