import { streamIdOf } from "../event";
import { openJournal } from "../journal";
import { at } from "../../test/support/journal-fixtures";
import { cms, deploys, useScriptedJournal } from "../../test/support/materialize-fixtures";
import {
  expiredSnapshots,
  listSnapshots,
  recordSnapshot,
  snapshot,
  snapshotObjects,
  storedSnapshots,
} from "./snapshot";

describe("snapshot", () => {
  const h = useScriptedJournal();

  it("a complete snapshot holds every object with per-stream watermarks and is listed", () => {
    const taken = snapshot(h.j, "c1", at(55), "nightly");
    expect(taken.coverage.complete).toBe(true);
    const s = recordSnapshot(h.j, taken.data, new Date(at(56)));
    expect(s.complete).toBe(true);
    expect(s.missing).toEqual([]);
    expect(s.objects.map(o => o.name).sort()).toEqual(["new", "web"]);
    expect(s.watermarks).toEqual({ [streamIdOf(deploys)]: "30", [streamIdOf(cms)]: "50" });
    const again = snapshotObjects(h.j, s.id!, { namespace: "shop" });
    expect(again.data.objects.map(o => o.name).sort()).toEqual(["new", "web"]);
    expect(again.warnings).toEqual([]);
    expect(again.coverage.complete).toBe(true);
    const listed = listSnapshots(h.j, "c1");
    expect(storedSnapshots(h.j, "c1")).toEqual({
      data: listed,
      coverage: { complete: true, gaps: [], downWindows: [], unrecorded: [], prunedBefore: null },
      warnings: [],
    });
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ id: s.id, name: "nightly", complete: true, objectCount: 2 });
  });

  it("reading a snapshot never appends; recording it does", () => {
    const before = h.j.recordCount();
    snapshot(h.j, "c1", at(55), "look");
    expect(h.j.recordCount()).toBe(before);
    recordSnapshot(h.j, snapshot(h.j, "c1", at(55), "keep").data);
    expect(h.j.recordCount()).toBe(before + 1);
  });

  it("a forced gap makes the snapshot incomplete with Missing filled, until a relist resolves it", () => {
    h.loseWatch();
    const during = snapshot(h.j, "c1", at(65), "during");
    expect(during.data.complete).toBe(false);
    expect(during.coverage.complete).toBe(false);
    expect(during.data.missing).toEqual([streamIdOf(cms)]);
    expect(during.warnings.join("\n")).toMatch(/gap .*410 Gone/);
    h.relistConfigMaps();
    const after = snapshot(h.j, "c1", at(75), "after");
    expect(after.data.complete).toBe(true);
    expect(after.data.objects.map(o => o.name).sort()).toEqual(["late", "web"]);
  });

  it("a stream without a baseline is missing from the snapshot", () => {
    const s = snapshot(h.j, "c1", at(5), "early").data;
    expect(s.complete).toBe(false);
    expect(s.missing.sort()).toEqual([streamIdOf(cms), streamIdOf(deploys)].sort());
    expect(s.objects).toEqual([]);
    const kept = recordSnapshot(h.j, s);
    const stored = storedSnapshots(h.j);
    expect(stored.coverage.complete).toBe(false);
    expect(stored.warnings).toEqual([
      `snapshot early (${kept.id}) is incomplete: missing ${s.missing.join(", ")}`,
    ]);
  });

  it("without objects says what the full snapshot says, read a page of objects at a time", () => {
    const same = (t: string) => {
      const full = snapshot(h.j, "c1", at(t === "during" ? 65 : 75), t);
      const lean = snapshot(h.j, "c1", at(t === "during" ? 65 : 75), t, { withoutObjects: true });
      expect(full.data.objects.length).toBeGreaterThan(0);
      expect(lean).toEqual({ ...full, data: { ...full.data, objects: [] } });
    };
    for (const when of [5, 15, 55]) {
      const full = snapshot(h.j, "c1", at(when), "x");
      const lean = snapshot(h.j, "c1", at(when), "x", { withoutObjects: true });
      expect(lean).toEqual({ ...full, data: { ...full.data, objects: [] } });
    }
    h.loseWatch();
    same("during");
    h.relistConfigMaps();
    same("after");
    // Pages of one object walk every object once, in id order, and end with next: null.
    const all = h.j.positionsAt("c1", Date.parse(at(75)));
    const paged: typeof all = [];
    for (let afterId: number | null = 0; afterId !== null; ) {
      const page = h.j.positionsPage("c1", Date.parse(at(75)), { afterId, limit: 1 });
      paged.push(...page.positions);
      afterId = page.next;
    }
    const ids = (ps: typeof all) => ps.map(p => p.identity.id);
    expect(ids(paged)).toEqual(ids(all).sort((a, b) => a - b));
    expect(paged.length).toBeGreaterThan(2);
    // The same positions (existence, absence, seq, RV), read without the stored objects: a page's
    // positions cannot be decoded.
    const byId = new Map(all.map(p => [p.identity.id, p as typeof p & { row?: unknown }]));
    for (const p of paged) {
      const { row: _row, ...full } = byId.get(p.identity.id)!;
      expect(p).toEqual(full);
    }
    expect(paged.some(p => !p.exists)).toBe(true);
    expect(() => h.j.record(paged[0])).toThrow(/not made by a journal view/);
  });

  it("keeps only the newest snapshots when asked which expired", () => {
    for (const n of [1, 2, 3])
      recordSnapshot(h.j, snapshot(h.j, "c1", at(55), `s${n}`).data, new Date(at(100 + n)));
    expect(expiredSnapshots(listSnapshots(h.j), 2).map(s => s.name)).toEqual(["s1"]);
    expect(() => expiredSnapshots([], -1)).toThrow(/whole number/);
  });

  it("is incomplete before pruned history and says the objects cannot be rebuilt", () => {
    h.j.close();
    h.j = openJournal(h.path, { retention: { maxAgeMs: 25_000 } });
    expect(h.j.prune(new Date(at(60)))).not.toBeNull();
    const s = snapshot(h.j, "c1", at(15), "old");
    expect(s.data.complete).toBe(false);
    expect(s.coverage.prunedBefore).not.toBeNull();
    expect(s.warnings.join("\n")).toMatch(/pruned; objects at .* cannot be rebuilt/);
  });
});
