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
 * Each feature contributes its command here, by name, so `krply --help` lists everything that exists.
 * A register function only declares its command; whatever is heavy (the kube client, the recorder)
 * is imported inside the action, so a command that reads a journal never loads it.
 */
const registrations: [name: string, register: (program: Command) => void][] = [
  ["timeline", registerTimeline],
  ["reconstruct", registerReconstruct],
  ["diff", registerDiff],
  ["snapshot", registerSnapshot],
  ["search", registerSearch],
  ["export", registerExport],
  ["coverage", registerCoverage],
  ["status", registerStatus],
  ["fsck", registerFsck],
  ["backup", registerBackup],
  ["record", registerRecord],
  ["who", registerWho],
  ["replay", registerReplay],
  ["compliance", registerCompliance],
];

/**
 * The command argv names: the first word after the root program's options (skipping the value of
 * each that takes one), if it is one of krply's.
 */
export function commandOf(argv: readonly string[], root: Command): string | undefined {
  const takesValue = new Set(
    root.options.filter(o => o.required || o.optional).flatMap(o => [o.short, o.long]),
  );
  for (let i = 2; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--") return undefined;
    if (takesValue.has(a)) i++;
    else if (!a.startsWith("-")) return registrations.some(([n]) => n === a) ? a : undefined;
  }
  return undefined;
}

/**
 * Builds the krply CLI: with argv, only the command it names when it names one (declaring all
 * fourteen, their options and help texts, costs every start a few ms; see docs/benchmarks.md, cli),
 * else every command, as the root's help, `help` and a mistyped command need them.
 */
export function buildCli(argv?: readonly string[]): Command {
  const program = rootProgram();
  const only = argv === undefined ? undefined : commandOf(argv, program);
  for (const [name, register] of registrations) {
    if (only === undefined || name === only) register(program);
  }
  return program;
}

let stdoutGuarded = false;

/**
 * A reader that stops early (`krply export | head`) closes the pipe: the CLI stops quietly, as other
 * tools do, instead of dying on the unhandled error with a stack trace. Once per process (tests run
 * the CLI many times in one).
 */
function guardStdout(): void {
  if (stdoutGuarded) return;
  stdoutGuarded = true;
  process.stdout.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code !== "EPIPE")
      process.stderr.write(`krply: cannot write the output: ${err.message}\n`);
    process.exit(err.code === "EPIPE" ? (process.exitCode ?? EXIT.OK) : EXIT.UNAVAILABLE);
  });
}

/**
 * Runs the CLI. Every failure becomes one line on stderr and an exit code (see EXIT); commander has
 * already printed its own usage errors, and help exits 0.
 */
export async function runCli(argv: string[]): Promise<void> {
  guardStdout();
  try {
    const program = buildCli(argv);
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
