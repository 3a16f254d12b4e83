import { backoffDelay, randomTimeoutSeconds } from "./backoff";

const bounds = { minMs: 100, maxMs: 10_000 };
const fixed = (v: number) => () => v;

describe("backoff", () => {
  it("grows exponentially within bounds, with jitter in the upper half", () => {
    expect(backoffDelay(0, bounds, fixed(0))).toBe(100);
    expect(backoffDelay(3, bounds, fixed(0))).toBe(400);
    expect(backoffDelay(3, bounds, fixed(1))).toBe(800);
    expect(backoffDelay(50, bounds, fixed(1))).toBe(10_000);
    expect(backoffDelay(50, bounds, fixed(0))).toBe(5_000);
  });

  it("never waits less than the minimum, even for a negative attempt", () => {
    expect(backoffDelay(-3, bounds, fixed(0))).toBe(100);
    expect(backoffDelay(1, bounds, fixed(0))).toBe(100);
  });

  it("spreads watch timeouts over the configured range", () => {
    expect(randomTimeoutSeconds(240, 480, fixed(0))).toBe(240);
    expect(randomTimeoutSeconds(240, 480, fixed(0.9999))).toBe(480);
  });
});
