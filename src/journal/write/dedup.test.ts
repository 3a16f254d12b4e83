import { randomBytes } from "node:crypto";
import { IdFilter } from "./dedup";

describe("IdFilter", () => {
  it("never forgets an id and rarely claims one it never saw", () => {
    const n = 200_000;
    const f = new IdFilter(n);
    const added = Array.from({ length: n }, () => randomBytes(16));
    for (const id of added) f.add(id);
    expect(added.every(id => f.mayHave(id))).toBe(true);
    let falsePositives = 0;
    for (let i = 0; i < 100_000; i++) if (f.mayHave(randomBytes(16))) falsePositives++;
    // Sized for 2n ids, so at n the rate is far below the 0.1% it has at capacity.
    expect(falsePositives / 100_000).toBeLessThan(0.002);
  });

  it("handles text ids and says when it is full", () => {
    const f = new IdFilter(10);
    const ids = Array.from({ length: 1000 }, (_, i) => `text-id-${i}`);
    for (const id of ids) f.add(id);
    expect(ids.every(id => f.mayHave(id))).toBe(true);
    expect(f.full).toBe(false);
    const id = Buffer.alloc(16);
    for (let i = 0; i < (1 << 23) / 16; i++) {
      id.writeUInt32LE(i, 0);
      f.add(id);
    }
    expect(f.full).toBe(true);
  });
});
