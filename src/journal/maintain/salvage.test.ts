import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { streamIdOf, type JournalRecord } from "../../event";
import {
  DAMAGED_STREAMS,
  damagedJournalRecords,
  damagePages,
  writeJournal,
} from "../../../test/support/damaged-journal";
import { tempJournalPath } from "../../../test/support/journal-fixtures";
import { JournalError, openJournal, openJournalView, salvageJournal } from "../index";

function allRecords(path: string): JournalRecord[] {
  const v = openJournalView(path);
  try {
    const out: JournalRecord[] = [];
    let cursor: string | undefined;
    do {
      const page = v.events({ cursor, limit: 5000 });
      out.push(...page.records);
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    return out;
  } finally {
    v.close();
  }
}

const digest = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");

describe("salvageJournal", () => {
  let tmp: ReturnType<typeof tempJournalPath>;
  beforeEach(() => (tmp = tempJournalPath("krply-salvage-")));
  afterEach(() => tmp.cleanup());

  it("copies every intact record of a damaged file into a new one and records a gap for what was lost", () => {
    const written = damagedJournalRecords(1700);
    writeJournal(tmp.path, written);
    damagePages(tmp.path, 0.3, 8);
    const before = digest(tmp.path);
    // The damaged file cannot be checked or opened for writing.
    expect(() => openJournalView(tmp.path).fsck()).toThrow();
    const target = join(tmp.dir, "salvaged.db");

    const result = salvageJournal(tmp.path, target);
    expect(digest(tmp.path)).toBe(before);
    expect(result.lost).toBeGreaterThan(0);
    expect(result.copied + result.lost).toBe(written.length);
    expect(result.lostRanges.length).toBeGreaterThan(0);
    expect(result.gaps).toBe(result.lostRanges.length * DAMAGED_STREAMS.length);

    // The copy is a sound journal: its full check passes and a writer opens it with its start check.
    const v = openJournalView(target);
    expect(v.fsck()).toMatchObject({ ok: true, problems: [] });
    // Every stream must list again before it is trusted: its gap is open.
    expect(v.streams().map(s => s.openGaps > 0)).toEqual(DAMAGED_STREAMS.map(() => true));
    v.close();
    openJournal(target, { check: "tail" }).close();

    // Every copied record is the one written, byte for byte, in the same order.
    const byId = new Map(written.map(r => [r.eventId, r]));
    const copied = allRecords(target);
    const objects = copied.filter(r => r.type === "event");
    expect(objects).toHaveLength(result.copied);
    for (const r of objects) {
      const orig = byId.get(r.eventId)!;
      expect(r.object).toEqual(orig.object);
      expect(r.resource).toEqual(orig.resource);
    }
    const order = objects.map(r => written.indexOf(byId.get(r.eventId)!));
    expect(order).toEqual([...order].sort((a, b) => a - b));

    // At each loss, every stream's gap names the last position its copied records prove.
    const firstLoss = result.lostRanges[0];
    const gaps = copied.filter(r => r.type === "gap");
    for (const key of DAMAGED_STREAMS) {
      const id = streamIdOf(key);
      const gap = gaps.find(g => g.streamId === id)!;
      expect(gap.gap!.reason).toMatch(
        new RegExp(`records ${firstLoss.fromSeq}-${firstLoss.toSeq} of .* could not be read`),
      );
      const beforeGap = copied.slice(0, copied.indexOf(gap)).filter(r => r.streamId === id);
      expect(gap.gap!.lastGoodResourceVersion).toBe(
        beforeGap.at(-1)?.resource?.resourceVersion ?? "",
      );
    }
  });

  it("copies an intact journal whole, with its checkpoints and no gap", () => {
    const written = damagedJournalRecords(50);
    writeJournal(tmp.path, written);
    const target = join(tmp.dir, "copy.db");
    const result = salvageJournal(tmp.path, target);
    expect(result).toMatchObject({ copied: written.length, lost: 0, gaps: 0, checkpoints: 3 });
    const v = openJournalView(target);
    const streams = v.streams();
    v.close();
    expect(streams.map(s => [s.openGaps, s.lastResourceVersion])).toEqual(
      DAMAGED_STREAMS.map(k => {
        const last = written.filter(r => r.streamId === streamIdOf(k)).at(-1)!;
        return [0, last.resource!.resourceVersion];
      }),
    );
    // The digest key came along, so later digests match earlier ones.
    expect(readFileSync(`${target}-digest.key`, "utf8")).toBe(
      readFileSync(`${tmp.path}-digest.key`, "utf8"),
    );
  });

  it("never writes on top of an existing file", () => {
    writeJournal(tmp.path, damagedJournalRecords(5));
    const target = join(tmp.dir, "taken.db");
    writeFileSync(target, "something");
    expect(() => salvageJournal(tmp.path, target)).toThrow(JournalError);
    expect(readFileSync(target, "utf8")).toBe("something");
    expect(existsSync(`${target}-wal`)).toBe(false);
  });
});
