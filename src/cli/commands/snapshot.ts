import type { Command } from "commander";
import type { Snapshot } from "../../materialize";
import { printAnswer, table } from "../output";
import { examples } from "./examples";
import { optionsOf, parseTimeFlag, shortStream, withBackend } from "./common";

function render(s: Snapshot): string {
  const head = `snapshot ${s.name} at ${s.at}: ${s.complete ? "COMPLETE" : "INCOMPLETE"}, ${s.objectCount} objects${s.id ? ` (id ${s.id})` : ""}`;
  const rows = s.streams.map(c => [
    shortStream(c.streamId),
    c.watermark ?? "-",
    c.baselinePresent ? "yes" : "no",
    c.unresolvedGap ? "GAP" : "-",
    c.complete ? "ok" : "MISSING",
  ]);
  return `${head}\n${table(["STREAM", "WATERMARK", "BASELINE", "GAP", "STATE"], rows)}`;
}

/** `krply snapshot [--at T]` and `krply snapshot list`. */
export function registerSnapshot(program: Command): void {
  const cmd = program
    .command("snapshot")
    .description("take a snapshot (every watched object at a time, with per-stream watermarks)")
    .option("--at <time>", "ISO time, now, or an age like 2h", "now")
    .option("--name <name>", "snapshot name (default: manual-<time>)")
    .option("--objects", "include the materialized objects in the output", false)
    .option(
      "--no-record",
      "do not write the SNAPSHOT record (use this while a recorder writes the journal: it takes one writer)",
    )
    .option("--cluster <id>", "cluster id (default: the only one in the journal)")
    .addHelpText(
      "after",
      examples([
        ["krply snapshot --name before-upgrade", "record a snapshot of now"],
        ["krply snapshot --at 2h --no-record --objects -o yaml", "every object 2 hours ago"],
        ["krply snapshot list", "stored snapshots"],
      ]),
    )
    .action(
      async (
        flags: { at: string; name?: string; objects: boolean; record: boolean },
        c: Command,
      ) => {
        const opts = optionsOf(c);
        const at = parseTimeFlag(flags.at, "--at");
        const ans = await withBackend(opts, b =>
          b.snapshot({
            cluster: opts.cluster,
            at,
            name: flags.name,
            objects: flags.objects,
            record: flags.record,
          }),
        );
        await printAnswer(opts, ans, render);
      },
    );
  cmd
    .command("list")
    .description("stored snapshots, oldest first")
    .option("--cluster <id>", "only this cluster")
    .addHelpText("after", examples([["krply snapshot list -o json", "stored snapshots as JSON"]]))
    .action(async (_flags: unknown, c: Command) => {
      const opts = optionsOf(c);
      const ans = await withBackend(opts, b => b.snapshots(opts.cluster));
      await printAnswer(opts, ans, l =>
        l.length === 0
          ? "no snapshots"
          : table(
              ["ID", "NAME", "AT", "TAKEN", "COMPLETE", "OBJECTS"],
              l.map(s => [
                s.id.slice(0, 12),
                s.name,
                s.at,
                s.takenAt,
                s.complete ? "yes" : "NO",
                String(s.objectCount),
              ]),
            ),
      );
    });
}
