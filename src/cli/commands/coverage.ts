import type { Command } from "commander";
import { journalStatus, streamReports } from "../../materialize";
import { printAnswer, table } from "../output";
import { optionsOf, shortStream, withView } from "./common";

/** `krply coverage`: every stream with its watermark, baseline and gaps. */
export function registerCoverage(program: Command): void {
  program
    .command("coverage")
    .description("streams, their watermarks (last durable RV), baselines and gaps")
    .option("--cluster <id>", "only this cluster")
    .action((_f: unknown, cmd: Command) => {
      const opts = optionsOf(cmd);
      withView(opts, v => {
        printAnswer(opts, streamReports(v, opts.cluster), streams =>
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
    });
}

/** `krply status`: the journal at a glance, with anything that makes its answers partial. */
export function registerStatus(program: Command): void {
  program
    .command("status")
    .description("journal size, streams by state, open gaps, last snapshot")
    .option("--cluster <id>", "only this cluster")
    .action((_f: unknown, cmd: Command) => {
      const opts = optionsOf(cmd);
      withView(opts, v => {
        printAnswer(opts, journalStatus(v, opts.cluster), d =>
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
    });
}
