import type { Command } from "commander";
import { printAnswer, table } from "../output";
import { examples } from "./examples";
import { optionsOf, shortStream, withBackend } from "./common";

/** `krply coverage`: every stream with its watermark, baseline and gaps. */
export function registerCoverage(program: Command): void {
  program
    .command("coverage")
    .description("streams, their watermarks (last durable RV), baselines and gaps")
    .option("--cluster <id>", "only this cluster")
    .addHelpText(
      "after",
      examples([
        ["krply coverage", "every stream of the journal"],
        ["krply coverage -o json", "the same for a program, with coverage and warnings"],
      ]),
    )
    .action(async (_f: unknown, cmd: Command) => {
      const opts = optionsOf(cmd);
      const ans = await withBackend(opts, b => b.coverage(opts.cluster));
      await printAnswer(opts, ans, streams =>
        table(
          ["CLUSTER", "STREAM", "STATE", "BASELINE", "WATERMARK", "LAST OBSERVED", "GAPS"],
          streams.map(s => [
            s.key.clusterId,
            shortStream(s.streamId),
            s.state,
            s.baselinePresent ? "yes" : "no",
            s.lastResourceVersion ?? "-",
            s.lastObservedAt ?? "-",
            s.gaps.length === 0 ? "-" : `${s.gaps.length} (${s.openGaps} open)`,
          ]),
        ),
      );
    });
}

/** `krply status`: the journal at a glance, with anything that makes its answers partial. */
export function registerStatus(program: Command): void {
  program
    .command("status")
    .description("journal size, streams by state, open gaps, last snapshot")
    .option("--cluster <id>", "only this cluster")
    .addHelpText(
      "after",
      examples([
        ["krply status", "the local journal ($KRPLY_JOURNAL or ./krply.db)"],
        ["krply --store /backups/journal.db status", "another journal file"],
        ["krply --server http://localhost:8080 status", "the sidecar's journal"],
      ]),
    )
    .action(async (_f: unknown, cmd: Command) => {
      const opts = optionsOf(cmd);
      const ans = await withBackend(opts, b => b.status(opts.cluster));
      await printAnswer(opts, ans, d =>
        [
          `journal       ${d.journal} (${(d.sizeBytes / 1048576).toFixed(1)} MiB, ${d.records} records)`,
          `clusters      ${d.clusters.join(", ") || "-"}`,
          `streams       ${d.streams} (${
            Object.entries(d.streamsByState)
              .map(([k, v]) => `${v} ${k}`)
              .join(", ") || "none"
          })`,
          `open gaps     ${d.openGaps}`,
          `pruned before ${d.prunedBefore ?? "-"}`,
          `last snapshot ${d.lastSnapshot ? `${d.lastSnapshot.name} at ${d.lastSnapshot.at} (${d.lastSnapshot.complete ? "complete" : "INCOMPLETE"})` : "-"}`,
        ].join("\n"),
      );
    });
}
