import { streamIdOf, eventRecord } from "../event";
import { at } from "../../test/support/journal-fixtures";
import { cm, cms, useScriptedJournal } from "../../test/support/materialize-fixtures";
import { timeline, timelinePage, type TimelineEntry } from "./timeline";

const cfg = { kind: "ConfigMap", namespace: "shop", name: "cfg" };

describe("timelinePage", () => {
  const h = useScriptedJournal();

  // cfg: listed at 10, deleted at 50, the watch lost after RV 50 (relisted at 70 without cfg),
  // then created again at 80 and edited at 90 and 100.
  beforeEach(() => {
    h.loseWatch();
    h.relistConfigMaps();
    const ev = (w: "ADDED" | "MODIFIED", rv: number, data: Record<string, string>) =>
      eventRecord({ stream: cms, watchType: w, object: cm("cfg", rv, data), observedAt: at(rv) });
    h.append([ev("ADDED", 80, { a: "2" })]);
    h.append([ev("MODIFIED", 90, { a: "3" })]);
    h.append([ev("MODIFIED", 100, { a: "3", b: "1" })]);
  });

  const pagesOf = (limit: number) => {
    const pages = [];
    let after: number | undefined;
    do {
      const p = timelinePage(h.j, "c1", cfg, { limit, after });
      pages.push(p);
      after = p.data.next ?? undefined;
    } while (after !== undefined && pages.length < 20);
    return pages;
  };
  const brief = (e: TimelineEntry) => [e.kind, e.resourceVersion, e.note, e.changes.length];

  it("lays pages of any size end to end into the whole timeline, the gap once and in place", () => {
    const whole = timeline(h.j, "c1", cfg).data;
    expect(whole.map(brief)).toEqual([
      ["version", "11", "first seen in a list", 0],
      ["version", "50", "deleted", 0],
      ["gap", null, `unknown until ${at(70)}: 410 Gone`, 0],
      ["version", "80", "created", 0],
      ["version", "90", null, 1],
      ["version", "100", null, 1],
    ]);
    for (const limit of [1, 2, 3, 4, 5, 6]) {
      const pages = pagesOf(limit);
      expect(pages).toHaveLength(Math.ceil(5 / limit));
      expect(pages.flatMap(p => p.data.entries)).toEqual(whole);
      for (const p of pages) expect(p.data.total).toBe(5);
    }
  });

  it("reads only the page and the version before it, for the first diff and note", () => {
    const [p1, p2, p3] = pagesOf(2);
    expect(p1.data.entries.map(brief)).toEqual([
      ["version", "11", "first seen in a list", 0],
      ["version", "50", "deleted", 0],
      ["gap", null, `unknown until ${at(70)}: 410 Gone`, 0],
    ]);
    // After a delete there is nothing to compare with: the object was created again.
    expect(p2.data.entries.map(brief)).toEqual([
      ["version", "80", "created", 0],
      ["version", "90", null, 1],
    ]);
    // The version before the page (90) is what the first entry's change is measured from.
    expect(p3.data.entries[0].changes.map(c => [c.path, c.before, c.after])).toEqual([
      ["data.b", undefined, "1"],
    ]);
  });

  it("gives each page the coverage of its span: a gap that started before it still counts", () => {
    const [p1, p2, p3] = pagesOf(2);
    const gap = { streamId: streamIdOf(cms), from: at(50), to: at(70), reason: "410 Gone" };
    // The gap starts on page 1 and still covers the start of page 2's span (50 to 90).
    expect(p1.coverage.gaps).toEqual([gap]);
    expect(p2.coverage.gaps).toEqual([gap]);
    expect(p2.data.entries.some(e => e.kind === "gap")).toBe(false);
    expect(p2.coverage.complete).toBe(false);
    expect(p3.coverage.gaps).toEqual([]);
    expect(p3.coverage.complete).toBe(true);
    expect(p3.warnings).toEqual([]);
  });

  it("links pages both ways and treats a position past the end as an empty last page", () => {
    const pages = pagesOf(2);
    expect(pages.map(p => p.data.previous === null)).toEqual([true, false, false]);
    expect(pages[1].data.previous).toBe(0);
    expect(pages[2].data.previous).toBe(pages[0].data.next);
    const back = timelinePage(h.j, "c1", cfg, { limit: 2, after: pages[2].data.previous! });
    expect(back.data.entries).toEqual(pages[1].data.entries);
    const past = timelinePage(h.j, "c1", cfg, { limit: 2, after: Number.MAX_SAFE_INTEGER });
    expect(past.data).toMatchObject({ entries: [], next: null, total: 5 });
  });
});
