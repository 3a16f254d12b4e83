import fc from "fast-check";
import type { OpTuple } from "./delta";
import { jsonOf, linesToTuples, tuplesToLines } from "./patch-text";

const path = fc.string({ maxLength: 12, unit: "binary" });
const tuple: fc.Arbitrary<OpTuple> = fc.oneof(
  fc.tuple(fc.constantFrom(0 as const, 1 as const), path, fc.jsonValue()),
  fc.tuple(fc.constantFrom(2 as const, 3 as const), path),
  fc.tuple(fc.constant(4 as const), fc.jsonValue()),
  fc.tuple(fc.constant(5 as const), path, fc.integer({ min: 1, max: 8 })),
);
// JSON has no -0 and no undefined, so compare what a JSON round trip keeps.
const norm = (v: unknown): unknown => JSON.parse(JSON.stringify(v));

describe("patch line form", () => {
  it("round-trips any ops, and declines paths holding a newline or \\u0001", () => {
    fc.assert(
      fc.property(fc.array(tuple, { maxLength: 6 }), tuples => {
        const text = tuplesToLines(tuples);
        const awkward = tuples.some(
          t => t[0] !== 4 && (t[1].includes("\n") || t[1].includes("\u0001")),
        );
        if (awkward) expect(text).toBeNull();
        else expect(linesToTuples(text!)).toEqual(norm(tuples));
      }),
      { numRuns: 500 },
    );
  });

  it("is shorter than the JSON array and rejects damaged lines", () => {
    const t: OpTuple[] = [
      [0, "/status/readyReplicas", 3],
      [3, "8:availableReplicas"],
    ];
    expect(tuplesToLines(t)!.length).toBeLessThan(JSON.stringify(t).length - 10);
    expect(() => linesToTuples("0/spec/replicas")).toThrow(/corrupt patch line/);
    expect(() => linesToTuples("9/x\u00011")).toThrow(/corrupt patch line/);
  });

  it("spells every value as JSON.stringify does", () => {
    const samples: unknown[] = [
      "",
      "plain",
      'a "quoted" \\ path',
      "tab\tand\nnewline\u0000\u001f\u007f",
      "\u2028\u2029 é 日本",
      "pair \ud83d\ude00 and lone \ud800 \udfff",
      0,
      -0,
      1.5,
      -1e-7,
      1e21,
      Number.MAX_SAFE_INTEGER,
      NaN,
      Infinity,
      -Infinity,
      true,
      false,
      null,
      undefined,
      { a: [1, "x"] },
    ];
    for (const v of samples) expect(jsonOf(v)).toBe(JSON.stringify(v));
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: "binary" }),
          fc.string({ unit: "grapheme" }),
          fc.double(),
          fc.jsonValue(),
        ),
        v => expect(jsonOf(v)).toBe(JSON.stringify(v)),
      ),
      { numRuns: 2000 },
    );
  });
});
