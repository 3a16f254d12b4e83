import { HeapTrimmer } from "./heap-trim";

describe("HeapTrimmer", () => {
  it("collects once per threshold of bytes read, counting the client's running total", () => {
    let runs = 0;
    const t = new HeapTrimmer(100, () => runs++);
    t.listed(60);
    expect(runs).toBe(0);
    t.listed(120);
    expect(runs).toBe(1);
    t.listed(200);
    expect(runs).toBe(1);
    t.listed(220);
    expect(runs).toBe(2);
  });

  it("gets V8's full collection at run time, without --expose-gc on the command line", () => {
    const t = new HeapTrimmer(1);
    t.listed(2);
    expect(t.runs).toBe(1);
  });
});
