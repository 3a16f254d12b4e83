import { Command, Option } from "commander";
import { loadConfig, type Env } from "../config";

/** Options every krply command understands. */
export interface GlobalOptions {
  output: "text" | "json" | "yaml";
  store: string;
}

/**
 * Builds the root `krply` command; each feature adds its subcommands with a register function. The
 * environment is read through src/config.ts, so a bad KRPLY_* variable stops the CLI with its name.
 */
export function rootProgram(env: Env = process.env): Command {
  // Outside the cluster the journal lives in the working directory unless KRPLY_JOURNAL says otherwise.
  const config = loadConfig(env, { defaults: { KRPLY_JOURNAL: "krply.db" } });
  return new Command("krply")
    .description("gap-aware history of Kubernetes objects, with safe replay")
    .addOption(
      new Option("-o, --output <format>", "output format")
        .choices(["text", "json", "yaml"])
        .default("text"),
    )
    .option("--store <path>", "journal file (SQLite); $KRPLY_JOURNAL when set", config.journalPath)
    .showHelpAfterError();
}

/** Reads the root options from any subcommand. */
export function globalOptions(cmd: Command): GlobalOptions {
  let root = cmd;
  while (root.parent) root = root.parent;
  return root.opts<GlobalOptions>();
}
