import { randomBytes } from "node:crypto";
import { eventRecord, type JournalRecord } from "../../event";
import { openJournal } from "../index";
import {
  at,
  checkpointsOf,
  configMap,
  streamKey,
  tempJournalPath,
} from "../../../test/support/journal-fixtures";
import { DedupWindow, IdFilter } from "./dedup";

describe("IdFilter", () => {
  it("never forgets an id and rarely claims one it never saw", () => {
    const n = 200_000;
    const f = new IdFilter(n);
    const added = Array.from({ length: n }, () => randomBytes(16));
    for (const id of added) f.add(id);
    expect(added.every(id => f.mayHave(id))).toBe(true);
    let falsePositives = 0;
    for (let i = 0; i < 100_000; i++) if (f.mayHave(randomBytes(16))) falsePositives++;
    expect(falsePositives / 100_000).toBeLessThan(0.002);
  });

  it("handles text ids and says when it holds its capacity", () => {
    const f = new IdFilter(1000);
    const ids = Array.from({ length: 1000 }, (_, i) => `text-id-${i}`);
    for (const id of ids.slice(0, 999)) f.add(id);
    expect(f.full).toBe(false);
    f.add(ids[999]);
    expect(ids.every(id => f.mayHave(id))).toBe(true);
    expect(f.full).toBe(true);
  });
});

describe("DedupWindow", () => {
  it("keeps fixed memory however many ids pass through, and always holds the newest capacity", () => {
    const w = new DedupWindow(10_000);
    const bytes = w.bytes;
    const ids: Buffer[] = [];
    for (let seq = 1; seq <= 200_000; seq++) {
      const id = randomBytes(16);
      ids.push(id);
      w.add(id, seq);
      if (seq % 1000 === 0) expect(w.size).toBeLessThanOrEqual(20_000);
    }
    expect(w.bytes).toBe(bytes);
    expect(bytes).toBeLessThanOrEqual(2 * 10_000 * 4); // 4 bytes per id at most
    expect(ids.slice(-10_000).every(id => w.mayHave(id))).toBe(true);
    // The window starts no later than the newest capacity ids and no earlier than twice that.
    expect(w.windowStart).toBeLessThanOrEqual(200_000 - 10_000 + 1);
    expect(w.windowStart).toBeGreaterThan(200_000 - 20_000);
  });

  it("sends a stream whose checkpoint lies before the window to the exact look-up", () => {
    const w = new DedupWindow(100);
    w.resumeAt(1, 5);
    for (let seq = 1; seq <= 300; seq++) w.add(randomBytes(16), seq);
    expect(w.needsExact(1, 301)).toBe(true);
    w.checkpointAt(1, 301);
    expect(w.needsExact(1, 302)).toBe(false);
    // A stream first seen now has nothing older than this record to copy.
    expect(w.needsExact(2, 302)).toBe(false);
  });
});

describe("journal dedup window", () => {
  const hot = streamKey("configmaps", "", "v1", "hot");
  const quiet = streamKey("configmaps", "", "v1", "quiet");
  const cm = (stream: typeof hot, name: string, rv: number): JournalRecord =>
    eventRecord({
      stream,
      watchType: "MODIFIED",
      object: configMap(name, stream.namespace, `uid-${stream.namespace}-${name}`, rv, {
        v: String(rv),
      }),
      observedAt: at(rv),
    });
  let tmp: ReturnType<typeof tempJournalPath>;
  beforeEach(() => (tmp = tempJournalPath()));
  afterEach(() => tmp.cleanup());

  it("stays bounded over a long journal and still drops every copy a resume can deliver", () => {
    const cap = 1000;
    let j = openJournal(tmp.path, { dedupWindow: cap });
    // A quiet stream checkpoints once at the start, then the hot one writes far past the window.
    const q = [cm(quiet, "q", 1), cm(quiet, "q", 2)];
    j.append({ records: q, checkpoints: checkpointsOf(q.slice(0, 1)) });
    const bytes = j.stats().dedup.bytes;
    let rv = 10;
    for (let b = 0; b < 30; b++) {
      const recs = Array.from({ length: 200 }, (_, i) => cm(hot, `c${i % 50}`, rv++));
      j.append({ records: recs, checkpoints: checkpointsOf(recs) });
    }
    const s = j.stats().dedup;
    expect(s.bytes).toBe(bytes);
    expect(s.bytes).toBeLessThanOrEqual(2 * cap * 4);
    expect(s.ids).toBeLessThanOrEqual(2 * cap);
    expect(s.windowStart).toBeGreaterThan(2);

    // The quiet stream resumes from rv 1 and is sent rv 2 again: its copy lies before the window.
    const again = j.append({ records: [cm(quiet, "q", 2)], checkpoints: [] });
    expect(again).toMatchObject({ appended: 0, duplicates: 1 });
    // The hot stream resumes from its last checkpoint and a few late copies arrive.
    const last = [cm(hot, "c49", rv - 1), cm(hot, "c48", rv - 2)];
    expect(j.append({ records: last, checkpoints: [] })).toMatchObject({ duplicates: 2 });
    j.close();

    // Reopening reads no rows at all, and still drops both kinds of copy.
    j = openJournal(tmp.path, { dedupWindow: cap });
    expect(j.stats().dedup.ids).toBe(0);
    expect(j.append({ records: [cm(quiet, "q", 2)], checkpoints: [] })).toMatchObject({
      duplicates: 1,
    });
    expect(j.append({ records: last, checkpoints: [] })).toMatchObject({ duplicates: 2 });
    expect(j.append({ records: [cm(hot, "c0", rv)], checkpoints: [] })).toMatchObject({
      appended: 1,
    });
    j.close();
  });
});
