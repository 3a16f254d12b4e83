import type { Command } from "commander";
import { openJournalView } from "../../journal";
import { CliError, EXIT } from "../errors";
import { printAnswer } from "../output";
import { examples } from "./examples";
import { optionsOf } from "./common";

/** `krply fsck`: checks every chain, checkpoint and page of a local journal; exit 4 when damaged. */
export function registerFsck(program: Command): void {
  program
    .command("fsck")
    .description(
      "check a local journal: SQLite pages, ingest order, every delta chain, checkpoints",
    )
    .addHelpText(
      "after",
      examples([
        ["krply fsck", "check ./krply.db (or $KRPLY_JOURNAL)"],
        ["krply fsck --store /backups/journal.db -o json", "check a backup, as JSON"],
      ]),
    )
    .action((_flags: unknown, cmd: Command) => {
      const opts = optionsOf(cmd);
      if (opts.server) throw new CliError("fsck reads the journal file: use --store", EXIT.USAGE);
      const v = openJournalView(opts.store, { idleSnapshot: true });
      let report;
      try {
        report = v.fsck();
      } finally {
        v.close();
      }
      printAnswer(opts, { data: { journal: opts.store, ...report }, warnings: [] }, r =>
        r.ok
          ? `journal ${r.journal} is healthy (${r.checked} checked)`
          : [
              `journal ${r.journal} is DAMAGED (${r.problems.length} problems, ${r.checked} checked):`,
              ...r.problems.map(p => `  ${p}`),
            ].join("\n"),
      );
      if (!report.ok) process.exitCode = EXIT.DAMAGED;
    });
}
