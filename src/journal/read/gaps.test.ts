import { baselineRecords, eventRecord, gapRecord, streamIdOf } from "../../event";
import {
  at,
  configMap,
  deployment,
  streamKey,
  tempJournalPath,
} from "../../../test/support/journal-fixtures";
import { openJournal, openJournalView } from "../index";

const shop = streamKey("deployments", "apps", "v1", "shop");
const ops = streamKey("deployments", "apps", "v1", "ops");
const cms = streamKey("configmaps", "", "v1", "shop");

function gap(stream: typeof shop, rv: string, n: number) {
  return gapRecord({ stream, lastGoodResourceVersion: rv, reason: "410 Gone", detectedAt: at(n) });
}

describe("gap windows", () => {
  it("finds the last good record of gaps far behind them, each on its own stream, in one pass", () => {
    const tmp = tempJournalPath();
    const j = openJournal(tmp.path, { sync: "NORMAL" });
    const view = openJournalView(tmp.path);
    try {
      j.append({
        records: [
          ...baselineRecords({
            stream: cms,
            listResourceVersion: "2",
            listedAt: at(2),
            objects: [],
            kind: "ConfigMap",
          }),
          eventRecord({
            stream: shop,
            watchType: "ADDED",
            object: deployment("web", "shop", "u1", 5, 3),
            observedAt: at(5),
          }),
          // The same RV on another stream, later: it must not start shop's window.
          eventRecord({
            stream: ops,
            watchType: "ADDED",
            object: deployment("job", "ops", "u2", 5, 3),
            observedAt: at(6),
          }),
        ],
        checkpoints: [],
      });
      // More rows than the search just before a gap looks at, all of another stream.
      for (let b = 0; b < 10; b++) {
        const recs = [];
        for (let i = 0; i < 500; i++) {
          const rv = 1000 + b * 500 + i;
          recs.push(
            eventRecord({
              stream: cms,
              watchType: "ADDED",
              object: configMap(`c${rv}`, "shop", `cu${rv}`, rv, { k: "v" }),
              observedAt: at(rv),
            }),
          );
        }
        j.append({ records: recs, checkpoints: [] });
      }
      // shop and ops hold RV 5; the journal holds no RV 77 of configmaps: its relist starts it.
      j.append({
        records: [gap(shop, "5", 9000), gap(ops, "5", 9001), gap(cms, "77", 9002)],
        checkpoints: [],
      });
      const starts = (v: typeof view) =>
        v.gapWindows().map(w => [w.streamId, new Date(w.fromMs).toISOString()]);
      const want = [
        [streamIdOf(shop), at(5)],
        [streamIdOf(ops), at(6)],
        [streamIdOf(cms), at(2)],
      ];
      expect(starts(view)).toEqual(want);
      expect(starts(j)).toEqual(want);
      // Found once per connection; the next gap is found on its own and the others stay as they were.
      // RV 1100 is configmaps', and shop never relisted: its window starts at the gap.
      j.append({ records: [gap(shop, "1100", 9100)], checkpoints: [] });
      expect(view.gapWindows(streamIdOf(shop)).map(w => w.fromMs)).toEqual([
        Date.parse(at(5)),
        Date.parse(at(9100)),
      ]);
      expect(starts(view).slice(0, 3)).toEqual(want);
    } finally {
      view.close();
      j.close();
      tmp.cleanup();
    }
  });

  it("finds a window's start again after retention removed the record it started at", () => {
    const tmp = tempJournalPath();
    const j = openJournal(tmp.path, { retention: { maxAgeMs: 3600_000 }, sync: "NORMAL" });
    const view = openJournalView(tmp.path);
    const base = Date.now();
    const t = (s: number) => new Date(base + s * 1000).toISOString();
    try {
      const version = (rv: number, s: number) =>
        eventRecord({
          stream: shop,
          watchType: "MODIFIED",
          object: deployment("web", "shop", "u1", rv, rv),
          observedAt: t(s),
        });
      j.append({ records: [version(1, 1), version(2, 2)], checkpoints: [] });
      const detected = t(7200);
      j.append({
        records: [
          gapRecord({
            stream: shop,
            lastGoodResourceVersion: "1",
            reason: "410 Gone",
            detectedAt: detected,
          }),
        ],
        checkpoints: [],
      });
      expect(view.gapWindows().map(w => w.fromMs)).toEqual([Date.parse(t(1))]);
      // Version 1 goes, version 2 stays as the object's keyframe at the horizon.
      expect(j.prune(new Date(base + 2 * 3600_000))?.pruned?.removedRecords).toBe(1);
      // RV 1 is no longer held and the stream has no relist: the gap is all that is known.
      expect(view.gapWindows().map(w => w.fromMs)).toEqual([Date.parse(detected)]);
    } finally {
      view.close();
      j.close();
      tmp.cleanup();
    }
  });
});
