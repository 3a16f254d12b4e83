import { at } from "../../test/support/journal-fixtures";
import { useScriptedJournal } from "../../test/support/materialize-fixtures";
import { search } from "./search";

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
});
