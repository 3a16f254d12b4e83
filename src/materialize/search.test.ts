import { at } from "../../test/support/journal-fixtures";
import { useScriptedJournal } from "../../test/support/materialize-fixtures";
import { joinPages } from "./answer";
import { search, searchPage, type SearchKey } from "./search";

describe("search", () => {
  const h = useScriptedJournal();

  it("finds when and where an object existed", () => {
    const { data: hits, coverage, warnings } = search(h.j, { namePrefix: "cf" });
    expect(hits).toHaveLength(1);
    expect(hits[0]).toMatchObject({ kind: "ConfigMap", namespace: "shop", name: "cfg" });
    expect(hits[0].ranges).toEqual([
      {
        from: at(10),
        to: at(50),
        uid: "u-cfg",
        createdAt: null,
        start: "first-seen",
        end: "deleted",
        uncertain: false,
      },
    ]);
    expect(coverage.complete).toBe(true);
    expect(warnings).toEqual([]);
    expect(search(h.j, { namePrefix: "w", labelSelector: "app=x" }).data).toEqual([]);
  });

  it("treats LIKE wildcards in the prefix as plain text", () => {
    expect(search(h.j, { namePrefix: "%" }).data).toEqual([]);
    expect(search(h.j, { namePrefix: "_eb" }).data).toEqual([]);
  });

  it("pages laid end to end give the whole search, whatever the page's limit and reach", () => {
    const whole = search(h.j, { namePrefix: "" });
    expect(whole.data.length).toBeGreaterThanOrEqual(2);
    for (const limit of [1, 2, 3]) {
      for (const examine of [1, 2, 5]) {
        const pages = [];
        let after: SearchKey | undefined;
        do {
          const page = searchPage(h.j, { namePrefix: "" }, { limit, examine, after });
          expect(page.data.hits.length).toBeLessThanOrEqual(Math.min(limit, examine));
          pages.push({ ...page, data: page.data.hits });
          after = page.data.next ?? undefined;
          expect(pages.length).toBeLessThan(50);
        } while (after !== undefined);
        expect({ limit, examine, joined: joinPages(pages) }).toEqual({
          limit,
          examine,
          joined: whole,
        });
      }
    }
  });

  it("ends with no next page, and a key past every object gives an empty last page", () => {
    const all = searchPage(h.j, { namePrefix: "" }, { limit: 1000 });
    expect(all.data.next).toBeNull();
    const beyond: SearchKey = ["\uffff", "", "", "", "", 0];
    expect(searchPage(h.j, { namePrefix: "" }, { limit: 10, after: beyond }).data).toEqual({
      hits: [],
      next: null,
    });
  });
});
