import type { Command } from "commander";
import { registerCoverage, registerStatus } from "./commands/coverage";
import { registerDiff } from "./commands/diff";
import { registerReconstruct } from "./commands/reconstruct";
import { registerRecord } from "./commands/record";
import { registerSearch } from "./commands/search";
import { registerSnapshot } from "./commands/snapshot";
import { registerTimeline } from "./commands/timeline";
import { rootProgram } from "./program";

/** Each feature contributes its commands here, so `krply --help` lists everything that exists. */
const registrations: ((program: Command) => void)[] = [
  registerTimeline,
  registerReconstruct,
  registerDiff,
  registerSnapshot,
  registerSearch,
  registerCoverage,
  registerStatus,
  registerRecord,
];

/** Builds the complete krply CLI. */
export function buildCli(): Command {
  const program = rootProgram();
  for (const register of registrations) register(program);
  return program;
}

/** Runs the CLI and maps failures to a clear message and a non-zero exit code. */
export async function runCli(argv: string[]): Promise<void> {
  try {
    await buildCli().parseAsync(argv);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const cause =
      err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : "";
    process.stderr.write(`krply: ${message}${cause}\n`);
    process.exitCode = 1;
  }
}

if (require.main === module) {
  void runCli(process.argv);
}
