import { eventRecord, snapshotRecord } from "../event";
import { openJournal, openJournalView, type Journal, type JournalView } from "../journal";
import { at, configMap, streamKey, tempJournalPath } from "../../test/support/journal-fixtures";
import { eventsAnswer, PageCache } from "./event-pages";
import { KeptBytes } from "./kept-bytes";
import { runQuery, type QueryName } from "./queries";
import type { QueryRunner } from "./route";

const cms = streamKey("configmaps", "", "v1", "shop");

function cm(n: number) {
  return eventRecord({
    stream: cms,
    watchType: "ADDED",
    object: configMap(`c${n}`, "shop", `u${n}`, n, { k: String(n) }),
    observedAt: at(n),
  });
}

const snap = (n: number) =>
  snapshotRecord(
    "test",
    {
      name: `s${n}`,
      at: at(n),
      complete: true,
      watermarks: {},
      missing: [],
      warnings: [],
      objectCount: 0,
    },
    at(n),
  );

describe("PageCache", () => {
  it("keeps pages within its byte budget, dropping the least recently used first", () => {
    const budget = new KeptBytes(25);
    const cache = new PageCache(budget);
    const bytes = (c: string) => Buffer.from(c.repeat(9));
    cache.set("a", 0, bytes("x"));
    cache.set("b", 0, bytes("y"));
    expect(cache.get("a", 0)).toEqual(bytes("x"));
    cache.set("c", 0, bytes("z"));
    expect(cache.get("b", 0)).toBeUndefined();
    expect(cache.get("a", 0)).toEqual(bytes("x"));
    expect(cache.get("c", 0)).toEqual(bytes("z"));
    expect(budget.bytes).toBe(20);
    // Larger than the whole budget: not kept, and nothing else leaves for it.
    cache.set("d", 0, Buffer.from("w".repeat(30)));
    expect(budget.size).toBe(2);
  });

  it("never answers with a page kept before the journal removed records", () => {
    const seen: string[] = [];
    const budget = new KeptBytes(1000);
    const cache = new PageCache(budget, r => seen.push(r));
    cache.set("a", 3, Buffer.from("page"));
    expect(cache.get("a", 3)).toEqual(Buffer.from("page"));
    expect(cache.get("a", 4)).toBeUndefined();
    expect(cache.get("a", 3)).toBeUndefined();
    expect(budget.size).toBe(0);
    // What the sidecar counts in krply_api_events_cache_total.
    expect(seen).toEqual(["hit", "stale", "miss"]);
  });
});

describe("eventsAnswer", () => {
  let tmp: ReturnType<typeof tempJournalPath>;
  let writer: Journal;
  let view: JournalView;
  let pageReads: number;
  let runner: QueryRunner;
  const now = Date.parse(at(1000));
  beforeEach(() => {
    tmp = tempJournalPath();
    writer = openJournal(tmp.path);
    view = openJournalView(tmp.path);
    pageReads = 0;
    const run = (name: QueryName, input: unknown) => {
      if (name === "eventsPageText") pageReads++;
      return Promise.resolve(
        runQuery(view, name, input as never, {
          journalPath: tmp.path,
          busyTimeoutMs: 1000,
          now: () => now,
        }),
      );
    };
    runner = { run, answer: run } as QueryRunner;
  });
  afterEach(() => {
    view.close();
    writer.close();
    tmp.cleanup();
  });

  const ask = async (cache: PageCache, limit: number, cursor?: string) =>
    JSON.parse(
      Buffer.concat(
        (await eventsAnswer(runner, cache, { filters: {}, limit, cursor, objects: true }))
          .text as Buffer[],
      ).toString(),
    ) as { data: { records: { resource?: { name: string } }[]; nextCursor: string | null } };
  const names = (a: Awaited<ReturnType<typeof ask>>) =>
    a.data.records.map(r => r.resource?.name ?? "-");

  it("never keeps a partial last page: records appended after it show up on the next ask", async () => {
    const budget = new KeptBytes(1 << 20);
    const cache = new PageCache(budget);
    writer.append({ records: [cm(1), cm(2), cm(3)], checkpoints: [] });
    const first = await ask(cache, 2);
    expect(names(first)).toEqual(["c1", "c2"]);
    const cursor = first.data.nextCursor!;
    expect(names(await ask(cache, 2, cursor))).toEqual(["c3"]);
    expect(budget.size).toBe(1);
    writer.append({ records: [cm(4), cm(5)], checkpoints: [] });
    const grown = await ask(cache, 2, cursor);
    expect(names(grown)).toEqual(["c3", "c4"]);
    expect(grown.data.nextCursor).not.toBeNull();
    // Now full, it is kept; asked again, it comes from the cache and is the answer a worker gives.
    const reads = pageReads;
    const again = await ask(cache, 2, cursor);
    expect(pageReads).toBe(reads);
    expect(again).toEqual(grown);
    const direct = runQuery(
      view,
      "events",
      { filters: {}, limit: 2, cursor, objects: true },
      { journalPath: tmp.path, busyTimeoutMs: 1000, now: () => now },
    );
    expect(again).toEqual(JSON.parse(JSON.stringify(direct)));
  });

  it("reads a kept page again once the journal removed records", async () => {
    const cache = new PageCache(new KeptBytes(1 << 20));
    const s = snap(2);
    writer.append({ records: [cm(1), s, cm(3), cm(4)], checkpoints: [] });
    expect(names(await ask(cache, 3))).toEqual(["c1", "-", "c3"]);
    const reads = pageReads;
    expect(names(await ask(cache, 3))).toEqual(["c1", "-", "c3"]);
    expect(pageReads).toBe(reads);
    expect(writer.deleteSnapshots([s.eventId])).toBe(1);
    expect(names(await ask(cache, 3))).toEqual(["c1", "c3", "c4"]);
    expect(pageReads).toBe(reads + 1);
  });
});
