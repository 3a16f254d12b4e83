import type { GapWindow, JournalView, StreamInfo } from "../journal";
import {
  answer,
  coverageOf,
  downWindowInfo,
  gapInfo,
  type Answer,
  type DownWindowInfo,
  type GapInfo,
} from "./answer";
import { byStream } from "./coverage";
import { listSnapshots, type SnapshotSummary } from "./snapshot";
import { describeGap, warn } from "./warnings";

/** A stream with every gap and every recorder down window it ever had. */
export interface StreamReport extends StreamInfo {
  gaps: GapInfo[];
  /** Closed downtimes of the recorder: changes in them were observed late, at the resume. */
  downWindows: DownWindowInfo[];
}

/** The journal at a glance. */
export interface JournalStatus {
  journal: string;
  sizeBytes: number;
  records: number;
  clusters: string[];
  streams: number;
  streamsByState: Record<string, number>;
  openGaps: number;
  prunedBefore: string | null;
  lastSnapshot: SnapshotSummary | null;
}

/** Every stream (optionally of one cluster) with its watermark, baseline, state and gaps. */
export function streamReports(view: JournalView, cluster?: string): Answer<StreamReport[]> {
  const warnings: string[] = [];
  const open: GapWindow[] = [];
  let partial = false;
  // One read each of every gap and down window, grouped here, instead of two reads per stream.
  const gapsOf = byStream(view.gapWindows());
  const downOf = byStream(view.downWindows());
  const streams = view
    .streams()
    .filter(s => cluster === undefined || s.key.clusterId === cluster)
    .map(s => {
      const windows = gapsOf.get(s.streamId) ?? [];
      for (const g of windows) {
        if (g.toMs !== null) continue;
        open.push(g);
        warnings.push(describeGap(g));
      }
      if (!s.baselinePresent) warnings.push(warn.noBaselineYet(s.streamId));
      if (s.state === "unavailable") warnings.push(warn.unavailable(s.streamId));
      if (s.state === "stopped") warnings.push(warn.stopped(s.streamId));
      partial ||= !s.baselinePresent || s.state === "unavailable" || s.state === "stopped";
      return {
        ...s,
        gaps: windows.map(gapInfo),
        downWindows: (downOf.get(s.streamId) ?? []).map(downWindowInfo),
      };
    });
  const pruned = view.prunedBefore();
  if (pruned) warnings.push(warn.prunedByRetention(pruned));
  if (streams.length === 0) warnings.push(warn.nothingCovered());
  // Pruned history is normal upkeep here, not a hole in what the streams cover now.
  const coverage = coverageOf(open, null, !partial && streams.length > 0);
  return answer(streams, { ...coverage, prunedBefore: pruned }, warnings);
}

/** Journal size, streams by state, open gaps and the last snapshot. */
export function journalStatus(view: JournalView, cluster?: string): Answer<JournalStatus> {
  const report = streamReports(view, cluster);
  const snaps = listSnapshots(view, cluster);
  const byState: Record<string, number> = {};
  for (const s of report.data) byState[s.state] = (byState[s.state] ?? 0) + 1;
  const data: JournalStatus = {
    journal: view.path,
    sizeBytes: view.sizeBytes(),
    records: view.recordCount(),
    clusters: [...new Set(report.data.map(s => s.key.clusterId))],
    streams: report.data.length,
    streamsByState: byState,
    openGaps: report.data.reduce((n, s) => n + s.openGaps, 0),
    prunedBefore: report.coverage.prunedBefore,
    lastSnapshot: snaps[snaps.length - 1] ?? null,
  };
  return answer(data, report.coverage, report.warnings);
}
