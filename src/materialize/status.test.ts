import { coverageRecord, streamIdOf } from "../event";
import { openJournal } from "../journal";
import { at } from "../../test/support/journal-fixtures";
import { cms, deploys, useScriptedJournal } from "../../test/support/materialize-fixtures";
import { recordSnapshot, snapshot } from "./snapshot";
import { journalStatus, streamReports } from "./status";

describe("stream reports and journal status", () => {
  const h = useScriptedJournal();

  it("reports every stream as complete when each has a baseline and no open gap", () => {
    const r = streamReports(h.j);
    expect(r.data.map(s => [s.streamId, s.state, s.baselinePresent, s.gaps])).toEqual([
      [streamIdOf(deploys), "active", true, []],
      [streamIdOf(cms), "active", true, []],
    ]);
    expect(r.coverage).toEqual({
      complete: true,
      gaps: [],
      downWindows: [],
      unrecorded: [],
      prunedBefore: null,
    });
    expect(r.warnings).toEqual([]);
  });

  it("lists each stream's recorder down windows (the UI's time strips mark them)", () => {
    h.j.append({
      records: [
        coverageRecord({
          stream: deploys,
          state: "available",
          reason: "recorder resumed from its checkpoint",
          observedAt: at(48),
          downSince: at(30),
        }),
      ],
      checkpoints: [],
    });
    const r = streamReports(h.j);
    expect(r.data.map(s => [s.streamId, s.downWindows])).toEqual([
      [streamIdOf(deploys), [{ streamId: streamIdOf(deploys), from: at(30), to: at(48) }]],
      [streamIdOf(cms), []],
    ]);
  });

  it("an open gap and an unavailable stream make coverage incomplete and say why", () => {
    h.loseWatch();
    h.j.append({
      records: [
        coverageRecord({
          stream: deploys,
          state: "unavailable",
          reason: "403 Forbidden",
          observedAt: at(61),
        }),
      ],
      checkpoints: [],
    });
    const r = streamReports(h.j, "c1");
    expect(r.coverage.complete).toBe(false);
    expect(r.coverage.gaps).toEqual([
      { streamId: streamIdOf(cms), from: at(50), to: null, reason: "410 Gone" },
    ]);
    expect(r.warnings).toEqual([
      `stream ${streamIdOf(deploys)} is unavailable (not recordable)`,
      `stream ${streamIdOf(cms)} has a gap from ${at(50)} to now (unresolved) (410 Gone); changes in it are unknown`,
    ]);
    expect(streamReports(h.j, "other").data).toEqual([]);
    expect(streamReports(h.j, "other").warnings).toEqual([
      "no streams recorded: nothing is covered",
    ]);
  });

  it("status counts streams by state, open gaps, records and the last snapshot", () => {
    recordSnapshot(h.j, snapshot(h.j, "c1", at(55), "nightly").data, new Date(at(56)));
    const s = journalStatus(h.j).data;
    expect(s).toMatchObject({
      journal: h.path,
      records: h.j.recordCount(),
      clusters: ["c1"],
      streams: 2,
      streamsByState: { active: 2 },
      openGaps: 0,
      prunedBefore: null,
      lastSnapshot: { name: "nightly", complete: true },
    });
    expect(s.sizeBytes).toBeGreaterThan(0);
  });

  it("names the prune horizon without calling current coverage incomplete", () => {
    h.j.close();
    h.j = openJournal(h.path, { retention: { maxAgeMs: 25_000 } });
    expect(h.j.prune(new Date(at(60)))).not.toBeNull();
    const r = streamReports(h.j);
    expect(r.coverage.prunedBefore).not.toBeNull();
    expect(r.coverage.complete).toBe(true);
    expect(r.warnings.join("\n")).toMatch(/pruned by retention/);
  });
});
