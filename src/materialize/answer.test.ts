import type { GapWindow } from "../journal";
import { answer, coverageOf, gapInfo } from "./answer";

const gap = (seq: number, toMs: number | null): GapWindow => ({
  streamId: "s",
  gapSeq: seq,
  fromMs: Date.UTC(2024, 0, 1),
  toMs,
  reason: "410 Gone",
  lastGoodResourceVersion: "7",
  resolvedByBaselineRv: toMs === null ? null : "9",
});

describe("answer shape", () => {
  it("shows a gap in ISO time, open gaps with no end", () => {
    expect(gapInfo(gap(1, Date.UTC(2024, 0, 2)))).toEqual({
      streamId: "s",
      from: "2024-01-01T00:00:00.000Z",
      to: "2024-01-02T00:00:00.000Z",
      reason: "410 Gone",
    });
    expect(gapInfo(gap(1, null)).to).toBeNull();
  });

  it("is complete only with no gap, no pruned history and nothing else missing", () => {
    expect(coverageOf([], null)).toEqual({
      complete: true,
      gaps: [],
      downWindows: [],
      unrecorded: [],
      prunedBefore: null,
    });
    expect(coverageOf([gap(1, null)], null).complete).toBe(false);
    expect(coverageOf([], "2024-01-01T00:00:00.000Z").complete).toBe(false);
    expect(coverageOf([], null, false).complete).toBe(false);
  });

  it("lists a gap once however many times the answer met it", () => {
    expect(coverageOf([gap(1, null), gap(1, null), gap(2, null)], null).gaps).toHaveLength(2);
  });

  it("keeps data, coverage and warnings side by side", () => {
    const c = coverageOf([], null);
    expect(answer([1], c, ["w"])).toEqual({ data: [1], coverage: c, warnings: ["w"] });
  });
});
