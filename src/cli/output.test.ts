import { Writable } from "node:stream";
import { printAnswer, table } from "./output";

function capture(): { out: Writable; text: () => string } {
  const chunks: string[] = [];
  const out = new Writable({
    write(chunk, _enc, cb) {
      chunks.push(String(chunk));
      cb();
    },
  });
  return { out, text: () => chunks.join("") };
}

describe("printAnswer", () => {
  it("prints warnings beside a text answer", async () => {
    const c = capture();
    await printAnswer(
      { output: "text" },
      { data: 3, warnings: ["gap in configmaps"] },
      n => `n=${n}`,
      c.out,
    );
    expect(c.text()).toBe("n=3\nWARNING: gap in configmaps\n");
  });

  it("keeps warnings inside machine-readable output", async () => {
    const c = capture();
    await printAnswer({ output: "json" }, { data: { a: 1 }, warnings: ["w"] }, () => "", c.out);
    expect(JSON.parse(c.text())).toEqual({ data: { a: 1 }, warnings: ["w"] });
  });

  it("prints ndjson as one line per list item, then coverage and warnings", async () => {
    const c = capture();
    await printAnswer(
      { output: "ndjson" },
      { data: [{ a: 1 }, { a: 2 }], warnings: ["w"] },
      () => "",
      c.out,
    );
    expect(
      c
        .text()
        .split("\n")
        .filter(Boolean)
        .map(l => JSON.parse(l)),
    ).toEqual([{ a: 1 }, { a: 2 }, { warnings: ["w"] }]);
  });

  it("prints YAML", async () => {
    const c = capture();
    await printAnswer({ output: "yaml" }, { data: { a: 1 }, warnings: [] }, () => "", c.out);
    expect(c.text()).toBe("data:\n  a: 1\nwarnings: []\n");
  });
});

describe("table", () => {
  it("aligns columns", () => {
    expect(table(["A", "BB"], [["xyz", "1"]])).toBe("A    BB\nxyz  1");
  });
});
