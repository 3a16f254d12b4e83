import fc from "fast-check";
import { canonicalIsoMs, isoFromMs } from "./iso-time";

describe("canonicalIsoMs", () => {
  it("reads every toISOString form back to its milliseconds", () => {
    const min = Date.UTC(100, 0, 1);
    const max = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
    fc.assert(
      fc.property(fc.integer({ min, max }), t => {
        expect(canonicalIsoMs(new Date(t).toISOString())).toBe(t);
      }),
      { numRuns: 2000 },
    );
  });

  it("accepts a string only when toISOString would write exactly that string", () => {
    const near = fc
      .tuple(
        fc.integer({ min: 0, max: 23 }),
        fc.integer({ min: 0, max: 9 }),
        fc.string({ maxLength: 1 }),
      )
      .map(([i, d, c]) => {
        const s = new Date(Date.UTC(2024, 1, 28, 23, 59, 59, 999)).toISOString();
        return s.slice(0, i) + (c || String(d)) + s.slice(i + 1);
      });
    fc.assert(
      fc.property(fc.oneof(near, fc.string({ maxLength: 26 })), s => {
        const ms = canonicalIsoMs(s);
        if (ms !== null) expect(new Date(ms).toISOString()).toBe(s);
      }),
      { numRuns: 3000 },
    );
  });

  it("refuses other spellings and impossible dates", () => {
    for (const s of [
      "2024-01-01T00:00:00Z",
      "2024-01-01T00:00:00.000+00:00",
      "2023-02-29T00:00:00.000Z",
      "2024-13-01T00:00:00.000Z",
      "2024-01-01T24:00:00.000Z",
      "0050-01-01T00:00:00.000Z",
    ])
      expect(canonicalIsoMs(s)).toBeNull();
    expect(canonicalIsoMs("2024-02-29T12:34:56.789Z")).toBe(Date.UTC(2024, 1, 29, 12, 34, 56, 789));
  });
});

describe("isoFromMs", () => {
  it("writes what toISOString writes, across and beyond four-digit years", () => {
    const min = new Date("0000-01-01T00:00:00.000Z").getTime();
    const max = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
    const edges = [
      min,
      max,
      0,
      -1,
      Date.UTC(2000, 1, 29),
      Date.UTC(2100, 2, 1) - 1,
      min - 1,
      max + 1,
    ];
    for (const t of edges) expect(isoFromMs(t)).toBe(new Date(t).toISOString());
    fc.assert(
      fc.property(fc.integer({ min: min - 10 * 86_400_000, max: max + 10 * 86_400_000 }), t => {
        expect(isoFromMs(t)).toBe(new Date(t).toISOString());
      }),
      { numRuns: 5000 },
    );
  });
});
