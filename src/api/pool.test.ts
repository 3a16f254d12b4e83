import { join } from "node:path";
import { logger } from "../log/logger";
import { ApiError } from "./errors";
import { QueryPool } from "./pool";

const script = join(__dirname, "..", "..", "test", "fixtures", "api", "spin-worker.ts");

function pool(over: Partial<ConstructorParameters<typeof QueryPool>[0]> = {}) {
  const events = { timedOut: [] as string[], replaced: 0, depth: [] as number[] };
  const p = new QueryPool({
    size: 1,
    timeoutMs: 5000,
    maxQueue: 4,
    data: { journalPath: "unused", busyTimeoutMs: 0 },
    log: logger("api-test"),
    script,
    observer: {
      queued: d => events.depth.push(d),
      timedOut: q => events.timedOut.push(q),
      replaced: () => events.replaced++,
    },
    ...over,
  });
  return { p, events };
}

describe("QueryPool", () => {
  it("cancels a query past its limit with a 503 and replaces the worker, which then answers", async () => {
    const { p, events } = pool();
    await p.ready();
    const started = Date.now();
    const err = (await p.run("spin", { ms: 60_000 }, 200).catch(e => e)) as ApiError;
    expect(err).toBeInstanceOf(ApiError);
    expect({ status: err.status, code: err.code }).toEqual({ status: 503, code: "timeout" });
    expect(err.message).toMatch(/longer than its limit of 200 ms and was cancelled/);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(events.timedOut).toEqual(["spin"]);
    await expect(p.run("echo", { v: 1 })).resolves.toMatchObject({ echo: 1 });
    expect(events.replaced).toBe(1);
    await p.close();
  });

  it("times out a query still waiting in the queue without touching the busy worker", async () => {
    const { p, events } = pool();
    await p.ready();
    const busy = p.run("spin", { ms: 400 }, 5000);
    const waiting = p.run("echo", { v: 2 }, 100).catch(e => e as ApiError);
    expect(await waiting).toMatchObject({ code: "timeout" });
    await expect(busy).resolves.toBe("spun");
    expect(events.replaced).toBe(0);
    await p.close();
  });

  it("refuses at once when the queue is full", async () => {
    const { p } = pool({ maxQueue: 1 });
    await p.ready();
    const busy = p.run("spin", { ms: 300 });
    const queued = p.run("echo", { v: 1 });
    await expect(p.run("echo", { v: 2 })).rejects.toMatchObject({
      status: 503,
      code: "unavailable",
    });
    await Promise.all([busy, queued]);
    await p.close();
  });

  it("passes a query's error through as an ApiError", async () => {
    const { p } = pool();
    await p.ready();
    await expect(p.run("fail", {})).rejects.toMatchObject({ status: 422, message: "no" });
    await p.close();
  });

  it("finishes running and queued queries on close, then refuses new ones", async () => {
    const { p } = pool();
    await p.ready();
    const running = p.run("spin", { ms: 200 });
    const queued = p.run("echo", { v: 3 });
    const closing = p.close();
    await expect(p.run("echo", { v: 4 })).rejects.toMatchObject({ code: "unavailable" });
    await expect(running).resolves.toBe("spun");
    await expect(queued).resolves.toMatchObject({ echo: 3 });
    await closing;
  });
});
