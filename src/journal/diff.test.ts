import fc from "fast-check";
import { applyPatch } from "fast-json-patch";
import { fromTuples } from "./codec";
import { diffTuples } from "./diff";

const clone = (v: unknown): unknown => JSON.parse(JSON.stringify(v)) as unknown;

describe("diffTuples", () => {
  it("emits RFC 6902 ops that fast-json-patch applies to turn any JSON value into any other", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (a, b) => {
        const ops = fromTuples(clone(diffTuples(a, b)) as ReturnType<typeof diffTuples>);
        const out = applyPatch(clone(a), ops, true, true).newDocument;
        expect(out).toEqual(clone(b));
      }),
      { numRuns: 300 },
    );
  });

  it("stores a resourceVersion bump and repeated timestamps compactly", () => {
    const t0 = "2024-01-01T00:00:00Z";
    const t1 = "2024-01-01T00:00:05Z";
    const a = {
      metadata: { resourceVersion: "1", managedFields: [{ time: t0 }] },
      status: { ready: 1, conditions: [{ lastUpdateTime: t0 }, { lastUpdateTime: t0 }] },
    };
    const b = clone(a) as typeof a;
    b.metadata.resourceVersion = "2";
    b.metadata.managedFields[0].time = t1;
    b.status.ready = 2;
    b.status.conditions[0].lastUpdateTime = t1;
    b.status.conditions[1].lastUpdateTime = t1;
    const tuples = diffTuples(a, b);
    expect(tuples.map(t => t[0])).toEqual([4, 0, 0, 5, 3]);
    expect(applyPatch(clone(a), fromTuples(tuples), true, true).newDocument).toEqual(b);
  });

  it("treats undefined members as absent, like JSON", () => {
    const tuples = diffTuples({ a: 1, b: undefined }, { a: 1, c: undefined });
    expect(tuples).toEqual([]);
  });
});
