import { eventRecord, gapRecord } from "../event";
import { openJournal } from "../journal";
import {
  call,
  scriptedJournalFile,
  startApiServer,
  testServerOptions,
} from "../../test/support/api-fixtures";
import { at } from "../../test/support/journal-fixtures";
import { cm, cms, deploys, web } from "../../test/support/materialize-fixtures";
import { AnswerCache, cachedHistory } from "./answer-cache";
import { KeptBytes } from "./kept-bytes";
import type { ApiServer } from "./server";

describe("AnswerCache", () => {
  const entry = (n: number) => ({ bytes: Buffer.alloc(n), streams: ["s"], mark: "m", checked: 0 });

  it("holds at most its bytes, dropping the least recently used first", () => {
    const budget = new KeptBytes(1000);
    const c = new AnswerCache(budget);
    c.set("a", entry(300));
    c.set("b", entry(300));
    c.get("a"); // a is now newer than b
    c.set("c", entry(300));
    expect(budget.bytes).toBeLessThanOrEqual(1000);
    expect([c.get("a"), c.get("b"), c.get("c")].map(e => e !== undefined)).toEqual([
      true,
      false,
      true,
    ]);
    c.set("huge", entry(5000));
    expect(c.get("huge")).toBeUndefined();
    c.delete("a");
    c.delete("c");
    expect({ size: budget.size, bytes: budget.bytes }).toEqual({ size: 0, bytes: 0 });
  });
});

describe("cachedHistory", () => {
  const input = { kind: "deploy", name: "web", namespace: "shop" };
  /** A journal as the cache sees it: a change count, a mark, and pages made from it. */
  const journal = () => {
    const j = { state: 1, mark: "m1", probes: 0, made: 0 };
    const ask = (c: AnswerCache) =>
      cachedHistory(
        c,
        input,
        () => j.state,
        () => {
          j.probes++;
          return j.mark;
        },
        () => {
          j.made++;
          return Promise.resolve({ text: `page ${j.made}`, streams: ["s"], mark: j.mark });
        },
      ).then(b => b.toString());
    return { j, ask };
  };

  it("serves a page again without probing its mark while the journal has not changed", async () => {
    const { j, ask } = journal();
    const c = new AnswerCache(new KeptBytes(1 << 20));
    expect(await ask(c)).toBe("page 1");
    expect([await ask(c), await ask(c)]).toEqual(["page 1", "page 1"]);
    expect({ probes: j.probes, made: j.made }).toEqual({ probes: 0, made: 1 });
  });

  it("probes the mark once per journal change, and builds afresh only when the mark moved", async () => {
    const { j, ask } = journal();
    const c = new AnswerCache(new KeptBytes(1 << 20));
    await ask(c);
    // A commit that leaves the page's mark (a snapshot, another object): one probe, then none.
    j.state = 2;
    expect([await ask(c), await ask(c)]).toEqual(["page 1", "page 1"]);
    expect({ probes: j.probes, made: j.made }).toEqual({ probes: 1, made: 1 });
    // A commit that moves it (a record of the object): made afresh.
    j.state = 3;
    j.mark = "m3";
    expect(await ask(c)).toBe("page 2");
    expect(await ask(c)).toBe("page 2");
    expect({ probes: j.probes, made: j.made }).toEqual({ probes: 2, made: 2 });
  });

  it("probes a page made while the journal moved, and treats an unreadable state as moved", async () => {
    const { j, ask } = journal();
    const c = new AnswerCache(new KeptBytes(1 << 20));
    // A record lands while the page is made: the page saw it, the change count read before did not.
    const made = cachedHistory(
      c,
      input,
      () => j.state,
      () => j.mark,
      () => {
        j.state = 2;
        j.mark = "m2";
        return Promise.resolve({ text: "page A", streams: ["s"], mark: "m2" });
      },
    );
    expect((await made).toString()).toBe("page A");
    // Next ask: the count moved since the page's check, so its mark is probed (and holds).
    expect(await ask(c)).toBe("page A");
    expect(j.probes).toBe(1);
    const broken = await cachedHistory(
      c,
      input,
      () => {
        throw new Error("closed");
      },
      () => {
        j.probes++;
        return j.mark;
      },
      () => Promise.reject(new Error("never")),
    );
    expect(broken.toString()).toBe("page A");
    expect(j.probes).toBe(2);
  });
});

describe("the sidecar's history answer cache", () => {
  let journal: ReturnType<typeof scriptedJournalFile>;
  let server: ApiServer;

  beforeAll(async () => {
    journal = scriptedJournalFile();
    server = await startApiServer(testServerOptions(journal.path, { answerCacheBytes: 1 << 20 }));
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    journal?.cleanup();
  });

  const results = async () => {
    const text = (await call(server, "/metrics")).text;
    const n = (r: string) =>
      Number(
        new RegExp(`krply_api_answer_cache_total\\{result="${r}"\\} (\\d+)`).exec(text)?.[1] ?? 0,
      );
    return { hit: n("hit"), stale: n("stale"), miss: n("miss") };
  };
  const append = (records: Parameters<ReturnType<typeof openJournal>["append"]>[0]["records"]) => {
    const j = openJournal(journal.path);
    try {
      j.append({ records, checkpoints: [], streams: [deploys, cms] });
    } finally {
      j.close();
    }
  };

  it("serves a page asked again from the cache, and builds it afresh once the object gains a record", async () => {
    const path = "/v1/objects/deploy/web/history?namespace=shop";
    const first = await call(server, path);
    const again = await call(server, path);
    expect(again.text).toBe(first.text);
    expect(await results()).toEqual({ hit: 1, stale: 0, miss: 1 });

    append([
      eventRecord({
        stream: deploys,
        watchType: "MODIFIED",
        object: web(80, 7, 5, "2024-01-01T02:20:00Z"),
        observedAt: at(80),
      }),
    ]);
    const after = await call(server, path);
    expect(after.json.data.total).toBe(first.json.data.total + 1);
    expect(after.json.data.entries.at(-1).resourceVersion).toBe("80");
    expect(await results()).toEqual({ hit: 1, stale: 1, miss: 1 });
  });

  it("builds a page afresh when its stream's coverage changes, and not for another stream's", async () => {
    const path = "/v1/objects/cm/late/history?namespace=shop";
    const before = await call(server, path);
    // The relist that closed the first gap is where "late" was first seen.
    expect(before.json.coverage.gaps.map((g: { to: string | null }) => g.to)).toEqual([at(70)]);
    const start = await results();
    // A record of another object on another stream leaves the page as it was.
    append([
      eventRecord({
        stream: deploys,
        watchType: "MODIFIED",
        object: web(90, 7, 7, "2024-01-01T02:21:00Z"),
        observedAt: at(90),
      }),
    ]);
    expect((await call(server, path)).text).toBe(before.text);
    expect((await results()).hit).toBe(start.hit + 1);
    // A gap on the ConfigMap stream after the page's last version changes the page's coverage.
    append([
      gapRecord({
        stream: cms,
        lastGoodResourceVersion: "70",
        reason: "410 Gone",
        detectedAt: at(100),
      }),
    ]);
    const after = await call(server, path);
    expect(after.json.coverage.gaps.map((g: { to: string | null }) => g.to)).toEqual([
      at(70),
      null,
    ]);
    expect((await results()).stale).toBe(start.stale + 1);
    // The object itself: an edit of "late" is in the next answer.
    append([
      eventRecord({
        stream: cms,
        watchType: "MODIFIED",
        object: cm("late", 110, { z: "1" }),
        observedAt: at(110),
      }),
    ]);
    const edited = await call(server, path);
    expect(
      edited.json.data.entries.map((e: { resourceVersion: string }) => e.resourceVersion),
    ).toContain("110");
  });

  it("answers bad input with the same 404 and 400 as without the cache", async () => {
    expect((await call(server, "/v1/objects/nokind/x/history?namespace=shop")).status).toBe(404);
    const bad = await call(server, "/v1/objects/deploy/web/history?namespace=shop&cursor=abc");
    expect(bad.status).toBe(400);
  });
});
