import type { Command } from "commander";
import { CliError, EXIT, explain } from "../errors";
import { journalPath } from "../program";
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
    .action(async (_flags: unknown, cmd: Command) => {
      const opts = optionsOf(cmd);
      if (opts.server) throw new CliError("fsck reads the journal file: use --store", EXIT.USAGE);
      const store = await journalPath(opts);
      const { openJournalView } = await import("../../journal");
      let report;
      try {
        const v = openJournalView(store, { idleSnapshot: true });
        try {
          report = v.fsck();
        } finally {
          v.close();
        }
      } catch (err) {
        const e = explain(err, store);
        if (e.exitCode !== EXIT.DAMAGED) throw e;
        // The check itself met the damage: say so without sending the user back to fsck.
        throw new CliError(e.message.replace(/; run `krply fsck.*$/, ""), EXIT.DAMAGED);
      }
      await printAnswer(opts, { data: { journal: store, ...report }, warnings: [] }, r =>
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
