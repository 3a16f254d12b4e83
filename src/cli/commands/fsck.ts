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
        [
          "krply fsck --salvage /var/lib/krply/salvaged.db",
          "copy every intact record of a damaged journal into a new file, with a gap for what was lost",
        ],
      ]),
    )
    .option(
      "--salvage <new-file>",
      "copy every record that can still be read into a new journal (never on top of an existing file); " +
        "each stream gets a GAP record where rows were lost",
    )
    .action(async (flags: { salvage?: string }, cmd: Command) => {
      const opts = optionsOf(cmd);
      if (opts.server) throw new CliError("fsck reads the journal file: use --store", EXIT.USAGE);
      const store = await journalPath(opts);
      if (flags.salvage !== undefined) return salvage(opts, store, flags.salvage);
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

/** `krply fsck --salvage <new-file>`: what was copied, what was lost, and what to do next. */
async function salvage(
  opts: ReturnType<typeof optionsOf>,
  store: string,
  target: string,
): Promise<void> {
  const { salvageJournal } = await import("../../journal");
  let result;
  try {
    result = salvageJournal(store, target);
  } catch (err) {
    throw explain(err, store);
  }
  const warnings =
    result.lost > 0
      ? [
          `${result.lost} records could not be read; every stream has a gap there and lists again when recording resumes`,
        ]
      : [];
  await printAnswer(opts, { data: result, warnings }, r =>
    [
      `salvaged ${r.copied} records of ${r.source} into ${r.target}; ${r.lost} lost` +
        (r.lostRanges.length > 0
          ? ` (ingestSeq ${r.lostRanges.map(l => (l.fromSeq === l.toSeq ? l.fromSeq : `${l.fromSeq}-${l.toSeq}`)).join(", ")})`
          : ""),
      `${r.gaps} gap records written, ${r.checkpoints} of ${r.streams} stream checkpoints carried over`,
      `next: stop krply, keep ${r.source} aside, move ${r.target} (and its -digest.key) into its place, start krply`,
    ].join("\n"),
  );
}
