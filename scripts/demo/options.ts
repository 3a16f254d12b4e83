// The demo's flags, checked with zod: a typo stops it with a usage line, never a stack trace.
import { parseArgs } from "node:util";
import { z } from "zod";

const OptionsSchema = z.object({
  help: z.boolean(),
  journal: z.string().min(1),
  apiPort: z.coerce.number().int().min(0).max(65_535),
  module: z.boolean(),
  kubeconfig: z.string().min(1).optional(),
  context: z.string().min(1).optional(),
  probeTimeoutMs: z.coerce.number().int().min(100).max(60_000),
});

/** What `npm run demo -- [flags]` was asked to do. */
export type DemoOptions = z.infer<typeof OptionsSchema>;

export const DEMO_USAGE = `usage: npm run demo -- [--journal krply-demo.db] [--api-port 8484] [--no-module]
                     [--kubeconfig <path>] [--context <name>] [--probe-timeout-ms 3000]

  --journal           the local journal the demo records into (replaced at start)
  --api-port          port of the query sidecar on 127.0.0.1; 0 picks a free one
  --no-module         skip the module under \`pepr dev\` (it takes a minute or two to build)
  --kubeconfig        kubeconfig to probe (default: $KUBECONFIG, ~/.kube/config)
  --context           kubeconfig context to probe (default: the current one)
  --probe-timeout-ms  how long the reachability probe of the context may take
  -h, --help          this text`;

/** Parses argv (without node and the script); throws an Error whose message is fit for the user. */
export function parseDemoArgs(argv: string[]): DemoOptions {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        journal: { type: "string", default: "krply-demo.db" },
        "api-port": { type: "string", default: "8484" },
        "no-module": { type: "boolean", default: false },
        kubeconfig: { type: "string" },
        context: { type: "string" },
        "probe-timeout-ms": { type: "string", default: "3000" },
        help: { type: "boolean", short: "h", default: false },
      },
    }));
  } catch (err) {
    throw new Error(`${(err as Error).message}\n${DEMO_USAGE}`, { cause: err });
  }
  const parsed = OptionsSchema.safeParse({
    help: values.help === true,
    journal: values.journal,
    apiPort: values["api-port"],
    module: values["no-module"] !== true,
    kubeconfig: values.kubeconfig,
    context: values.context,
    probeTimeoutMs: values["probe-timeout-ms"],
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`--${String(issue.path[0])}: ${issue.message}\n${DEMO_USAGE}`);
  }
  return parsed.data;
}

/** The one-line progress message shown while Go builds the API server harness. */
export function buildProgressLine(elapsedMs: number): string {
  const s = Math.floor(elapsedMs / 1000);
  const clock = `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  return `building the local kube-apiserver harness with Go: ${clock} so far (a cold first build takes up to ~30 min; later runs use the cache)`;
}

/**
 * Which harness (if any) the reachable context points at: the krply test harness is disposable, so the
 * demo may write its workload there; any other cluster is only read.
 */
export function isHarnessServer(contextServer: string, harnessServer: string | undefined): boolean {
  if (!harnessServer) return false;
  const norm = (u: string) => u.replace(/\/+$/, "");
  return norm(contextServer) === norm(harnessServer);
}
