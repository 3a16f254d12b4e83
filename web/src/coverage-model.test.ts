import { coverageRows, coverageSummary, resourceLabel, type StreamReport } from "./coverage-model";
import { countByStream, formatSeconds, healthRows, windowSeconds } from "./health-model";

const stream = (id: string, over: Partial<StreamReport> = {}): StreamReport => ({
  streamId: id,
  key: { clusterId: "c1", group: "", resource: id, namespace: "" },
  lastResourceVersion: "9",
  lastObservedAt: "2024-01-01T00:00:09.000Z",
  baselinePresent: true,
  openGaps: 0,
  state: "active",
  gaps: [],
  lagSeconds: 1.5,
  ...over,
});
const gap = { streamId: "b", from: "2024-01-01T00:00:50.000Z", to: null, reason: "410 Gone" };

describe("coverage matrix rows", () => {
  it("joins stream reports with coverage at a time and puts trouble first", () => {
    const rows = coverageRows(
      [
        stream("a", { key: { resource: "deployments", group: "apps", namespace: "" } }),
        stream("b", { gaps: [gap], openGaps: 1 }),
        stream("c", { state: "unavailable" }),
      ],
      [
        {
          streamId: "b",
          watermark: "7",
          watermarkObservedAt: null,
          baselinePresent: true,
          unresolvedGap: true,
          available: true,
          complete: false,
          reasons: ["gap"],
        },
        {
          streamId: "a",
          watermark: "9",
          watermarkObservedAt: null,
          baselinePresent: true,
          unresolvedGap: false,
          available: true,
          complete: true,
          reasons: [],
        },
      ],
    );
    expect(rows.map(r => [r.streamId, r.completeAt, r.unavailable, r.openGaps])).toEqual([
      ["b", false, false, 1],
      ["c", null, true, 0],
      ["a", true, false, 0],
    ]);
    expect(rows[2].resource).toBe("deployments.apps");
    expect(rows[0].watermark).toBe("7");
    expect(rows[1].down).toEqual([]);
    expect(coverageSummary(rows)).toEqual({
      streams: 3,
      incomplete: 1,
      withGaps: 1,
      withDown: 0,
      unavailable: 1,
    });
  });

  it("labels core resources without a group", () => {
    expect(resourceLabel({ resource: "configmaps", group: "" })).toBe("configmaps");
  });
});

describe("stream health", () => {
  it("counts events per stream over the window and reports relists from gaps", () => {
    const counts = countByStream([{ streamId: "a" }, { streamId: "a" }, { streamId: "b" }]);
    const rows = healthRows(
      [
        stream("a"),
        stream("b", { gaps: [gap, { ...gap, to: "x" }], openGaps: 1, lagSeconds: null }),
      ],
      { counts, seconds: 10, truncated: true },
    );
    expect(
      rows.map(r => [r.streamId, r.eventsPerSecond, r.atLeast, r.relists, r.lagSeconds]),
    ).toEqual([
      ["a", 0.2, true, 0, 1.5],
      ["b", 0.1, true, 2, null],
    ]);
    expect(healthRows([stream("a")], null)[0].eventsPerSecond).toBeNull();
  });

  it("formats seconds for people and window lengths defensively", () => {
    expect([null, 0.456, 42.4, 185, 7300].map(formatSeconds)).toEqual([
      "unknown",
      "0.46 s",
      "42 s",
      "3 min 5 s",
      "2 h 1 min",
    ]);
    expect([
      windowSeconds("60"),
      windowSeconds("5"),
      windowSeconds("x"),
      windowSeconds(undefined),
    ]).toEqual([60, 300, 300, 300]);
  });
});
