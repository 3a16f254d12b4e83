import { KeptBytes, type Shelf } from "./kept-bytes";

describe("KeptBytes", () => {
  const page = (c: string) => c.repeat(9);

  it("keeps entries asked again through a scan of entries asked once", () => {
    // 10 bytes an entry: the budget holds 8, entries asked again may fill 7 of them.
    const kept = new KeptBytes(80);
    const hot = ["a", "b", "c", "d", "e", "f"];
    for (const k of hot) kept.set(k, page(k), 10);
    for (const k of hot) expect(kept.get(k)).toBe(page(k));
    // A client paging through 50 entries once: each is kept on probation, and only they leave.
    for (let i = 0; i < 50; i++) kept.set(`scan-${i}`, page("s"), 10);
    for (const k of hot) expect(kept.get(k)).toBe(page(k));
    expect(kept.bytes).toBeLessThanOrEqual(80);
    expect(kept.size).toBe(8);
    // Past their share, the least recently asked of them goes back to probation, and then out.
    for (const k of ["g", "h"]) {
      kept.set(k, page(k), 10);
      expect(kept.get(k)).toBe(page(k));
    }
    kept.set("i", page("i"), 10);
    kept.set("j", page("j"), 10);
    expect(kept.get("a")).toBeUndefined();
    expect(kept.bytes).toBeLessThanOrEqual(80);
    for (const k of ["c", "d", "e", "f", "g", "h"]) expect(kept.get(k)).toBe(page(k));
  });

  it("is one budget for every shelf: one kind's entries make room by pushing out the other's", () => {
    // 10 bytes an entry: the budget holds 10.
    const kept = new KeptBytes(100);
    const history = kept.shelf<string>("history\u0000");
    const events = kept.shelf<number>("events\u0000");
    /** Asks each key: kept on its first ask (made then), from the budget on its second. */
    const ask = <V>(shelf: Shelf<V>, keys: string[], make: (k: string) => V) =>
      keys.map(k => {
        if (shelf.get(k) === undefined) shelf.set(k, make(k), 10);
        return shelf.get(k);
      });
    const four = ["a", "b", "c", "d"];
    const eight = ["a", "b", "c", "d", "e", "f", "g", "h"];
    ask(history, four, k => `history ${k}`);
    // The same key on two shelves is two entries.
    expect(ask(events, four, k => k.charCodeAt(0))).toEqual([97, 98, 99, 100]);
    expect([history.get("a"), kept.size, kept.bytes]).toEqual(["history a", 8, 80]);
    // Events pages asked again take the room of the history pages asked less recently.
    expect(ask(events, eight, k => k.charCodeAt(0))).toEqual([97, 98, 99, 100, 101, 102, 103, 104]);
    expect(four.map(k => history.get(k))).toContain(undefined);
    expect(kept.bytes).toBeLessThanOrEqual(100);
    // And the reverse, once history is asked again and events pages are not.
    expect(ask(history, eight, k => `history ${k}`)).toEqual(eight.map(k => `history ${k}`));
    expect(eight.map(k => events.get(k))).toContain(undefined);
    expect(kept.bytes).toBeLessThanOrEqual(100);
    // Larger than the whole budget: not kept, and nothing else leaves for it.
    const size = kept.size;
    events.set("huge", 0, 101);
    expect([events.get("huge"), kept.size]).toEqual([undefined, size]);
    for (const k of eight) {
      history.delete(k);
      events.delete(k);
    }
    expect({ size: kept.size, bytes: kept.bytes }).toEqual({ size: 0, bytes: 0 });
  });
});
