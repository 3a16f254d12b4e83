import { Command, Option } from "commander";

/** Output formats: an aligned table for people (text is its old name), the rest for programs. */
export const OUTPUTS = ["table", "text", "json", "yaml", "ndjson"] as const;

/** Options every krply command understands. */
export interface GlobalOptions {
  output: (typeof OUTPUTS)[number];
  /** As given; journalPath() resolves the default. */
  store?: string;
  /** The query sidecar to ask instead of a local journal. */
  server?: string;
  token?: string;
}

/**
 * The journal file: --store, else the settings of src/config.ts (KRPLY_JOURNAL; outside the cluster
 * ./krply.db), so a bad KRPLY_* variable stops the CLI with its name. The config (and zod) loads only
 * for commands that open a local journal without --store.
 */
export async function journalPath(opts: Pick<GlobalOptions, "store">): Promise<string> {
  // Every local command resolves its journal here first, so the image's addon applies to all of them.
  const { useJournalAddon } = await import("./journal-addon");
  useJournalAddon(process.env);
  if (opts.store !== undefined) return opts.store;
  const { loadConfig } = await import("../config");
  return loadConfig(process.env, { defaults: { KRPLY_JOURNAL: "krply.db" } }).journalPath;
}

/** Builds the root `krply` command; each feature adds its subcommands with a register function. */
export function rootProgram(): Command {
  return new Command("krply")
    .description("gap-aware history of Kubernetes objects, with safe replay")
    .addOption(
      new Option("-o, --output <format>", "output format").choices(OUTPUTS).default("table"),
    )
    .option("--store <path>", "journal file (SQLite) (default: $KRPLY_JOURNAL, else ./krply.db)")
    .option("--server <url>", "ask the krply query sidecar at this URL instead of --store")
    .option(
      "--token <token>",
      "bearer token for --server (default: the current context of $KUBECONFIG or ~/.kube/config)",
    )
    .showHelpAfterError()
    .addHelpText(
      "after",
      `
Examples:
  krply timeline deploy/web -n shop                 every change of a Deployment
  krply reconstruct cm/app -n shop --at 2h          a ConfigMap as it was two hours ago
  krply --server http://localhost:8080 status       ask the sidecar (kubectl port-forward) instead
  kubectl krply coverage                            the same, as a kubectl plugin

Exit codes: 0 ok, 1 unexpected failure, 2 bad usage or input, 3 not found, 4 journal damaged (run
krply fsck), 5 journal unavailable (busy, read-only, I/O), 6 server unreachable or failing,
7 token rejected or not allowed.`,
    );
}

/** Reads the root options from any subcommand. */
export function globalOptions(cmd: Command): GlobalOptions {
  let root = cmd;
  while (root.parent) root = root.parent;
  return root.opts<GlobalOptions>();
}
