// A small journal for CLI tests and the CLI start-up benchmark: a Deployment with a few versions, a
// ConfigMap, and a gap on the ConfigMap stream.
import { baselineRecords, eventRecord, gapRecord, type JournalRecord } from "../../src/event";
import { openJournal } from "../../src/journal";
import { at, checkpointsOf, configMap, deployment, streamKey } from "./journal-fixtures";

export const cliDeploys = streamKey("deployments", "apps", "v1", "", "c1");
export const cliConfigMaps = streamKey("configmaps", "", "v1", "", "c1");

/** Writes the journal and closes it; every record is committed and the WAL folded into the file. */
export function writeCliJournal(path: string, versions = 10): void {
  const j = openJournal(path);
  const recs: JournalRecord[] = [
    ...baselineRecords({
      stream: cliDeploys,
      listResourceVersion: "100",
      listedAt: at(1),
      objects: [deployment("web", "shop", "d1", 100, 1)],
      kind: "Deployment",
    }),
    ...baselineRecords({
      stream: cliConfigMaps,
      listResourceVersion: "100",
      listedAt: at(1),
      objects: [configMap("app", "shop", "c1", 100, { a: "0" })],
      kind: "ConfigMap",
    }),
  ];
  for (let i = 1; i <= versions; i++) {
    recs.push(
      eventRecord({
        stream: cliDeploys,
        watchType: "MODIFIED",
        object: deployment("web", "shop", "d1", 100 + i, 1 + (i % 3)),
        observedAt: at(10 * i),
      }),
    );
  }
  recs.push(
    eventRecord({
      stream: cliConfigMaps,
      watchType: "MODIFIED",
      object: configMap("app", "shop", "c1", 200, { a: "1" }),
      observedAt: at(15),
    }),
  );
  j.append({
    records: recs,
    checkpoints: checkpointsOf(recs),
    streams: [cliDeploys, cliConfigMaps],
  });
  j.append({
    records: [
      gapRecord({
        stream: cliConfigMaps,
        lastGoodResourceVersion: "200",
        reason: "410 Gone",
        detectedAt: at(20),
      }),
    ],
    checkpoints: [],
  });
  j.close();
}
