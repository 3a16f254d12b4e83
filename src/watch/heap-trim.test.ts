import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { HeapTrimmer, OPTIMIZE_AFTER_BYTES } from "./heap-trim";

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

  it("says once that the cluster is big, when the bytes listed reach OPTIMIZE_AFTER_BYTES", () => {
    let big = 0;
    const t = new HeapTrimmer(
      OPTIMIZE_AFTER_BYTES * 4,
      () => undefined,
      () => big++,
    );
    t.listed(OPTIMIZE_AFTER_BYTES - 1);
    expect(big).toBe(0);
    t.listed(OPTIMIZE_AFTER_BYTES);
    expect(big).toBe(1);
    t.listed(OPTIMIZE_AFTER_BYTES * 3);
    expect(big).toBe(1);
  });

  it("gets V8's full collection at run time, without --expose-gc on the command line", () => {
    const t = new HeapTrimmer(1);
    t.listed(2);
    expect(t.runs).toBe(1);
  });
});

/**
 * What V8 does in a fresh process (flags are per process, so never in Jest's): the young generation's
 * size after a churn of short-lived objects, and whether a hot function gets the optimizing compiler,
 * before and after a listing of OPTIMIZE_AFTER_BYTES.
 */
function v8Effects(lean: boolean): {
  youngBefore: number;
  youngAfter: number;
  youngAfterListing: number;
  optimized: boolean;
  optimizedAfterListing: boolean;
} {
  const script = `
    const v8 = require("node:v8");
    const { leanRecorderHeap, HeapTrimmer, OPTIMIZE_AFTER_BYTES } = require(${JSON.stringify(join(__dirname, "heap-trim.ts"))});
    const young = () => v8.getHeapSpaceStatistics().find(s => s.space_name === "new_space").space_size;
    v8.setFlagsFromString("--allow-natives-syntax");
    const status = new Function("f", "return %GetOptimizationStatus(f)");
    const prepare = new Function("f", "%PrepareFunctionForOptimization(f)");
    const optimizeNext = new Function("f", "%OptimizeFunctionOnNextCall(f)");
    // Bit 4 of V8's optimization status: the function runs optimized code.
    const optimized = f => { prepare(f); f(1); f(2); optimizeNext(f); f(3); return (status(f) & 16) !== 0; };
    const youngBefore = young();
    if (${lean}) leanRecorderHeap();
    const churn = () => {
      let window = [];
      for (let i = 0; i < 3e6; i++) { window.push({ i, s: "x" + i }); if (window.length > 50000) window = []; }
    };
    churn();
    const youngAfter = young();
    const a = optimized(x => x * 2 + 1);
    new HeapTrimmer(Number.MAX_SAFE_INTEGER, () => {}).listed(OPTIMIZE_AFTER_BYTES);
    const b = optimized(x => x * 3 + 1);
    churn();
    const youngAfterListing = young();
    process.stdout.write(JSON.stringify({ youngBefore, youngAfter, youngAfterListing, optimized: a, optimizedAfterListing: b }));
  `;
  const out = execFileSync(
    process.execPath,
    ["--require", require.resolve("tsx/cjs"), "-e", script],
    {
      encoding: "utf8",
    },
  );
  return JSON.parse(out) as ReturnType<typeof v8Effects>;
}

describe("leanRecorderHeap", () => {
  it("keeps the young generation at its size and the optimizing compiler off until a big listing", () => {
    const lean = v8Effects(true);
    expect(lean.youngAfter).toBeLessThanOrEqual(lean.youngBefore);
    expect(lean.optimized).toBe(false);
    expect(lean.optimizedAfterListing).toBe(true);
    // A big cluster's event rate gets V8's usual young generation back.
    expect(lean.youngAfterListing).toBeGreaterThan(lean.youngAfter);
    // Without it, the same churn doubles the young generation and the function is optimized.
    const usual = v8Effects(false);
    expect(usual.youngAfter).toBeGreaterThan(usual.youngBefore);
    expect(usual.optimized).toBe(true);
  }, 60_000);
});
