import type { Command } from "commander";
import type { Journal, StreamInfo } from "../../journal";
import {
  describeGap,
  gapSpans,
  JournalReader,
  listSnapshots,
  type GapSpan,
} from "../../materialize";
import { printAnswer, table } from "../output";
import { optionsOf, shortStream, withJournal } from "./common";

interface StreamReport extends StreamInfo {
  gaps: { from: string; to: string | null; reason: string }[];
}

function collect(
  j: Journal,
  cluster?: string,
): { streams: StreamReport[]; warnings: string[]; pruned: string | null } {
  const reader = new JournalReader(j.path);
  try {
    const warnings: string[] = [];
    const streams = j
      .streams()
      .filter(s => cluster === undefined || s.key.clusterId === cluster)
      .map(s => {
        const spans: GapSpan[] = gapSpans(j, reader, s.streamId);
        for (const g of spans) if (g.toMs === null) warnings.push(describeGap(g));
        if (!s.baselinePresent)
          warnings.push(`stream ${s.streamId} has no baseline yet; its history is partial`);
        if (s.state === "unavailable")
          warnings.push(`stream ${s.streamId} is unavailable (not recordable)`);
        if (s.state === "stopped") warnings.push(`stream ${s.streamId} is stopped`);
        return {
          ...s,
          gaps: spans.map(g => ({
            from: new Date(g.fromMs).toISOString(),
            to: g.toMs === null ? null : new Date(g.toMs).toISOString(),
            reason: g.reason,
          })),
        };
      });
    const pruned = reader.prunedBefore();
    if (pruned) warnings.push(`history before ${pruned} was pruned by retention`);
    if (streams.length === 0) warnings.push("no streams recorded: nothing is covered");
    return { streams, warnings, pruned };
  } finally {
    reader.close();
  }
}

/** `krply coverage`: every stream with its watermark, baseline and gaps. */
export function registerCoverage(program: Command): void {
  program
    .command("coverage")
    .description("streams, their watermarks (last durable RV), baselines and gaps")
    .option("--cluster <id>", "only this cluster")
    .action((_f: unknown, cmd: Command) => {
      const opts = optionsOf(cmd);
      withJournal(opts, false, j => {
        const c = collect(j, opts.cluster);
        printAnswer(opts, { data: c.streams, warnings: c.warnings }, streams =>
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
      withJournal(opts, false, j => {
        const c = collect(j, opts.cluster);
        const snaps = listSnapshots(j, opts.cluster);
        const byState: Record<string, number> = {};
        for (const s of c.streams) byState[s.state] = (byState[s.state] ?? 0) + 1;
        const data = {
          journal: j.path,
          sizeBytes: j.sizeBytes(),
          records: j.stats().records,
          clusters: [...new Set(c.streams.map(s => s.key.clusterId))],
          streams: c.streams.length,
          streamsByState: byState,
          openGaps: c.streams.reduce((n, s) => n + s.openGaps, 0),
          prunedBefore: c.pruned,
          lastSnapshot: snaps[snaps.length - 1] ?? null,
        };
        printAnswer(opts, { data, warnings: c.warnings }, d =>
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
