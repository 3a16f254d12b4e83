import type { Command } from "commander";
import { CliError, EXIT, explain } from "../errors";
import { journalPath } from "../program";
import { printAnswer, progress } from "../output";
import { examples } from "./examples";
import { optionsOf } from "./common";

/** `krply backup --to FILE`: a consistent copy of a live journal (SQLite's online backup). */
export function registerBackup(program: Command): void {
  program
    .command("backup")
    .description(
      "copy a journal, even while the recorder writes it, into one consistent file (never cp a live journal: it misses what is still in the -wal file)",
    )
    .requiredOption("--to <file>", "the copy to write")
    .option("--force", "replace the file at --to", false)
    .addHelpText(
      "after",
      examples([
        ["krply backup --to /backups/krply-$(date +%F).db", "copy ./krply.db while it records"],
        ["krply --store /data/krply.db backup --to copy.db", "copy another journal"],
      ]),
    )
    .action(async (flags: { to: string; force: boolean }, cmd: Command) => {
      const opts = optionsOf(cmd);
      if (opts.server) throw new CliError("backup copies a journal file: use --store", EXIT.USAGE);
      if (flags.to.trim() === "") throw new CliError("--to is empty", EXIT.USAGE);
      const store = await journalPath(opts);
      const { backupJournal, openJournalView } = await import("../../journal");
      const bar = progress("copying pages");
      let r, records, sizeBytes;
      try {
        r = await backupJournal(store, flags.to, {
          overwrite: flags.force,
          onProgress: (copied, total) => bar.tick(copied, total),
        });
        // Opening the copy proves it is a journal of this schema and counts what it holds.
        const copy = openJournalView(r.path, { idleSnapshot: true });
        records = copy.recordCount();
        sizeBytes = copy.sizeBytes();
        copy.close();
      } catch (err) {
        throw explain(err, store);
      } finally {
        bar.done();
      }
      await printAnswer(
        opts,
        {
          data: { from: opts.store, to: r.path, pages: r.pages, records, sizeBytes },
          warnings: [],
        },
        d => `backed up ${d.from} to ${d.to}: ${d.records} records, ${d.pages} pages`,
      );
    });
}
