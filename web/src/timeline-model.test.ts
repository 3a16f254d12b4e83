import type { Coverage } from "./api-client";
import {
  actorText,
  fieldManagers,
  timelineItems,
  valueText,
  type HistoryEntry,
} from "./timeline-model";

const t = (s: number) => new Date(Date.UTC(2024, 0, 1) + s * 1000).toISOString();
const S = "c1/-/v1/configmaps/shop/-";
const version = (s: number, rv: string, over: Partial<HistoryEntry> = {}): HistoryEntry => ({
  kind: "version",
  observedAt: t(s),
  resourceVersion: rv,
  watchType: "MODIFIED",
  recordType: "event",
  synthetic: false,
  streamId: S,
  changes: [],
  manager: null,
  note: null,
  ...over,
});
const gapEntry = (s: number): HistoryEntry => ({
  ...version(s, ""),
  kind: "gap",
  resourceVersion: null,
  watchType: null,
  recordType: "gap",
  note: `unknown until ${t(70)}: 410 Gone`,
});
const complete: Coverage = {
  complete: true,
  gaps: [],
  downWindows: [],
  unrecorded: [],
  prunedBefore: null,
};

describe("timeline items", () => {
  it("keeps versions in order, each knowing the RV before it, and a gap where it is", () => {
    const items = timelineItems(
      [version(10, "11"), version(50, "50"), gapEntry(50), version(70, "69")],
      {
        ...complete,
        complete: false,
        gaps: [{ streamId: S, from: t(50), to: t(70), reason: "410 Gone" }],
      },
    );
    expect(
      items.map(i =>
        i.kind === "version" ? `v${i.entry.resourceVersion}<${i.previousRv}` : i.kind,
      ),
    ).toEqual(["v11<null", "v50<11", "gap", "v69<50"]);
    expect(items[2]).toMatchObject({ kind: "gap", from: t(50), to: t(70), reason: "410 Gone" });
  });

  it("reads a gap's end from its note when the coverage does not list it", () => {
    const [g] = timelineItems([gapEntry(50)], complete);
    expect(g).toMatchObject({ kind: "gap", to: t(70), reason: "410 Gone" });
  });

  it("places a down window at its start, after what was seen then, and pruned history first", () => {
    const items = timelineItems([version(30, "30"), version(48, "48"), version(60, "60")], {
      ...complete,
      complete: false,
      prunedBefore: t(5),
      downWindows: [
        { streamId: S, from: t(30), to: t(48) },
        { streamId: "other", from: t(40), to: t(41) },
      ],
    });
    expect(items.map(i => i.kind + (i.kind === "version" ? i.entry.resourceVersion : ""))).toEqual([
      "pruned",
      "version30",
      "down",
      "version48",
      "version60",
    ]);
  });
});

describe("who is behind a change", () => {
  it("names the audit user, else the field manager, else why nobody is known", () => {
    expect(actorText({ source: "audit", user: "alice", verb: "patch", auditId: "a-1" }, null)).toBe(
      "user alice (audit, patch)",
    );
    expect(
      actorText(
        { source: "managedFields", manager: "kubectl-edit", operation: "Update", time: null },
        null,
      ),
    ).toBe("field manager kubectl-edit (Update)");
    expect(
      actorText({ source: "unknown", reason: "a delete writes no managedFields entry" }, null),
    ).toBe("unknown: a delete writes no managedFields entry");
    expect(actorText(null, "helm (Apply)")).toBe("field manager helm (Apply)");
    expect(
      fieldManagers({
        path: "spec.replicas",
        managers: [
          { manager: "kubectl-edit", operation: "Update", time: null, basis: "exact" },
          { manager: "hpa", operation: "Update", time: null, basis: "ancestor" },
        ],
      }),
    ).toBe("kubectl-edit (Update), hpa (Update, ancestor)");
    expect(fieldManagers({ path: "x" })).toBeNull();
  });

  it("shortens long values", () => {
    expect(valueText(undefined)).toBe("(absent)");
    expect(valueText("a")).toBe('"a"');
    expect(valueText("x".repeat(300))).toHaveLength(118);
  });
});
