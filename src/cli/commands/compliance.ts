import type { Command } from "commander";
import { CliError, EXIT } from "../errors";
import { printAnswer, table } from "../output";
import { examples } from "./examples";
import { optionsOf } from "./common";

/**
 * `krply compliance`: the controls of docs/threat-model.md, each with the code that implements it and
 * the tests that prove it. --verify resolves every reference against a source checkout, so the report
 * can be checked where it is printed, not only in krply's CI.
 */
export function registerCompliance(program: Command): void {
  program
    .command("compliance")
    .description("the security controls of the threat model, with the code and tests behind each")
    .option("--verify [root]", "check every reference against a krply source checkout (default: .)")
    .option("--control <id>", "only this control (KR-RBAC-1, ...)")
    .addHelpText(
      "after",
      examples([
        ["krply compliance", "one line per control: status, coverage, code and test counts"],
        ["krply compliance --control KR-GATE-1 -o yaml", "one control with its code and tests"],
        ["krply compliance --verify ~/src/krply", "also resolve every reference in a checkout"],
      ]),
    )
    .action(async (flags: { verify?: string | true; control?: string }, cmd: Command) => {
      const opts = optionsOf(cmd);
      const c = await import("../../compliance");
      const full = c.complianceReport(c.CONTROLS, c.IMPLEMENTATIONS);
      const controls = flags.control
        ? full.controls.filter(r => r.id === flags.control)
        : full.controls;
      if (controls.length === 0) {
        throw new CliError(`no control ${flags.control}; see krply compliance`, EXIT.NOT_FOUND);
      }
      const problems = [...full.problems];
      if (flags.verify !== undefined) {
        const root = flags.verify === true ? "." : flags.verify;
        problems.push(...(await unresolvedIn(root, c)));
      }
      await printAnswer(
        opts,
        { data: { ok: problems.length === 0, controls, problems }, warnings: problems },
        d =>
          table(
            ["ID", "STATUS", "COVERAGE", "CODE", "TESTS", "CONTROL"],
            c.reportRows({ ...full, controls: d.controls }),
          ),
      );
      if (problems.length > 0) {
        throw new CliError(
          `${problems.length} compliance problem(s): each control needs code and a test that exist`,
          EXIT.FAILURE,
        );
      }
    });
}

async function unresolvedIn(root: string, c: typeof import("../../compliance")): Promise<string[]> {
  const { existsSync, readFileSync } = await import("node:fs");
  const { join } = await import("node:path");
  if (!existsSync(join(root, "src", "compliance"))) {
    throw new CliError(`${root} is not a krply source checkout (no src/compliance)`, EXIT.USAGE);
  }
  return c.unresolvedReferences(c.IMPLEMENTATIONS, file => {
    const path = join(root, file);
    return existsSync(path) ? readFileSync(path, "utf8") : null;
  });
}
