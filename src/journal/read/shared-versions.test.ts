import fc from "fast-check";
import { applyPatch, type Operation } from "fast-json-patch";
import { fromTuples } from "../codec/codec";
import { diffTuples } from "../codec/delta";
import { applyCopyOnWrite } from "./shared-versions";

const clone = (v: unknown): unknown => JSON.parse(JSON.stringify(v)) as unknown;
// fast-json-patch bans ops on "__proto__" keys; the codec stores such versions whole instead.
const json = fc.jsonValue().filter(v => !JSON.stringify(v).includes("__proto__"));

describe("applyCopyOnWrite", () => {
  it("gives the patched value and leaves the shared original untouched", () => {
    fc.assert(
      fc.property(json, json, json, (a0, b0, c0) => {
        // Compare what JSON keeps (it has no -0).
        const [a, b, c] = [clone(a0), clone(b0), clone(c0)];
        const base = clone(a);
        const before = JSON.stringify(base);
        const toB = applyCopyOnWrite(base, fromTuples(diffTuples(a, b)));
        const toC = applyCopyOnWrite(base, fromTuples(diffTuples(a, c)));
        expect(toB).toEqual(clone(b));
        expect(toC).toEqual(clone(c));
        expect(JSON.stringify(base)).toBe(before);
        // The same answer fast-json-patch gives on a private copy.
        expect(toB).toEqual(applyPatch(clone(a), fromTuples(diffTuples(a, b))).newDocument);
      }),
      { numRuns: 400 },
    );
  });

  it("treats ops off the usual path exactly as fast-json-patch does", () => {
    const base = { spec: { list: [1, 2] }, data: { a: "x" } };
    const odd: Operation[][] = [
      [{ op: "replace", path: "/spec/missing/x", value: 1 }],
      [{ op: "add", path: "/spec/list/5", value: 1 }],
      [{ op: "add", path: "/spec/list/-", value: 3 }],
      [{ op: "add", path: "/spec/list/01", value: 3 }],
      [{ op: "remove", path: "/spec/list/2" }],
      [{ op: "remove", path: "/data/b" }],
      [{ op: "move", from: "/data/a", path: "/data/c" }],
    ];
    for (const ops of odd) {
      let expected: unknown;
      try {
        expected = applyPatch(clone(base), ops).newDocument;
      } catch {
        expect(() => applyCopyOnWrite(base, ops)).toThrow();
        continue;
      }
      expect(applyCopyOnWrite(base, ops)).toEqual(expected);
    }
    expect(base).toEqual({ spec: { list: [1, 2] }, data: { a: "x" } });
  });

  it("shares the subtrees a patch does not touch", () => {
    const base = { spec: { big: { x: 1 } }, status: { n: 1 } };
    const v = applyCopyOnWrite(base, [
      { op: "replace", path: "/status/n", value: 2 },
    ]) as typeof base;
    expect(v.status.n).toBe(2);
    expect(base.status.n).toBe(1);
    expect(v.spec).toBe(base.spec);
  });
});
