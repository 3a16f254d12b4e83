import { CommanderError, type Command } from "commander";
import { registerBackup } from "./commands/backup";
import { registerCompliance } from "./commands/compliance";
import { registerCoverage, registerStatus } from "./commands/coverage";
import { registerDiff } from "./commands/diff";
import { registerExport } from "./commands/export";
import { registerFsck } from "./commands/fsck";
import { registerReconstruct } from "./commands/reconstruct";
import { registerRecord } from "./commands/record";
import { registerReplay } from "./commands/replay";
import { registerSearch } from "./commands/search";
import { registerSnapshot } from "./commands/snapshot";
import { registerTimeline } from "./commands/timeline";
import { registerWho } from "./commands/who";
import { EXIT, explain } from "./errors";
import { rootProgram } from "./program";

/**
 * Each feature contributes its commands here, so `krply --help` lists everything that exists. A
 * register function only declares its command; whatever is heavy (the kube client, the recorder)
 * is imported inside the action, so a command that reads a journal never loads it.
 */
const registrations: ((program: Command) => void)[] = [
  registerTimeline,
  registerReconstruct,
  registerDiff,
  registerSnapshot,
  registerSearch,
  registerExport,
  registerCoverage,
  registerStatus,
  registerFsck,
  registerBackup,
  registerRecord,
  registerWho,
  registerReplay,
  registerCompliance,
];

/** Builds the complete krply CLI. */
export function buildCli(): Command {
  const program = rootProgram();
  for (const register of registrations) register(program);
  return program;
}

/**
 * Runs the CLI. Every failure becomes one line on stderr and an exit code (see EXIT); commander has
 * already printed its own usage errors, and help exits 0.
 */
export async function runCli(argv: string[]): Promise<void> {
  try {
    const program = buildCli();
    // Subcommands copy the exit override only when created after it, so set it on each.
    const override = (c: Command): void => {
      c.exitOverride();
      c.commands.forEach(override);
    };
    override(program);
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      process.exitCode = err.exitCode === 0 ? EXIT.OK : EXIT.USAGE;
      return;
    }
    const e = explain(err);
    process.stderr.write(`krply: ${e.message}\n`);
    process.exitCode = e.exitCode;
  }
}
