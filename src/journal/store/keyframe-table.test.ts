import fc from "fast-check";
import { KeyframeTable } from "./keyframe-table";

const pos = (id: number) => ({
  seq: id * 10 + 2 ** 40,
  chainLen: id % 7,
  keyframeBytes: 1000 + id,
});

describe("KeyframeTable", () => {
  it("answers the position last set for each id, across growth, and nothing for an id never set", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 300_000 }), { minLength: 1, maxLength: 200 }),
        ids => {
          const t = new KeyframeTable();
          const last = new Map<number, ReturnType<typeof pos>>();
          ids.forEach((id, n) => {
            const p = { ...pos(id), chainLen: n };
            t.set(id, p);
            last.set(id, p);
          });
          // Ids below the largest table (2^20 slots) never share a slot.
          for (const [id, p] of last) expect(t.get(id)).toEqual(p);
          for (const id of [1, 2, 65_537, 299_999])
            if (!last.has(id)) expect(t.get(id)).toBeUndefined();
        },
      ),
    );
  });

  it("tells ids that share a slot apart: the one set last wins, the other is a miss", () => {
    const t = new KeyframeTable();
    const a = 5;
    const b = 5 + 2 ** 20;
    t.set(2 ** 20 - 1, pos(1)); // grows to the largest table
    t.set(a, pos(a));
    t.set(b, pos(b));
    expect(t.get(b)).toEqual(pos(b));
    expect(t.get(a)).toBeUndefined();
  });

  it("forgets everything on clear", () => {
    const t = new KeyframeTable();
    t.set(3, pos(3));
    t.set(200_000, pos(200_000));
    t.clear();
    expect(t.get(3)).toBeUndefined();
    expect(t.get(200_000)).toBeUndefined();
  });
});
