import { Command, Option } from "commander";

/** Options every krply command understands. */
export interface GlobalOptions {
  output: "text" | "json" | "yaml";
  store: string;
}

/** Builds the root `krply` command; each feature adds its subcommands with a register function. */
export function rootProgram(): Command {
  return new Command("krply")
    .description("gap-aware history of Kubernetes objects, with safe replay")
    .addOption(
      new Option("-o, --output <format>", "output format")
        .choices(["text", "json", "yaml"])
        .default("text"),
    )
    .option("--store <path>", "journal file (SQLite)", process.env.KRPLY_JOURNAL ?? "krply.db")
    .showHelpAfterError();
}

/** Reads the root options from any subcommand. */
export function globalOptions(cmd: Command): GlobalOptions {
  let root = cmd;
  while (root.parent) root = root.parent;
  return root.opts<GlobalOptions>();
}
