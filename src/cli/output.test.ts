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
  it("prints warnings beside a text answer", () => {
    const c = capture();
    printAnswer(
      { output: "text" },
      { data: 3, warnings: ["gap in configmaps"] },
      n => `n=${n}`,
      c.out,
    );
    expect(c.text()).toBe("n=3\nWARNING: gap in configmaps\n");
  });

  it("keeps warnings inside machine-readable output", () => {
    const c = capture();
    printAnswer({ output: "json" }, { data: { a: 1 }, warnings: ["w"] }, () => "", c.out);
    expect(JSON.parse(c.text())).toEqual({ data: { a: 1 }, warnings: ["w"] });
  });
});

describe("table", () => {
  it("aligns columns", () => {
    expect(table(["A", "BB"], [["xyz", "1"]])).toBe("A    BB\nxyz  1");
  });
});
