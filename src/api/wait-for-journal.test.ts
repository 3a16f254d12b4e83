import { createServer } from "node:net";
import { openJournal } from "../journal";
import { logger } from "../log/logger";
import { tempJournalPath } from "../../test/support/journal-fixtures";
import { waitForJournal } from "./wait-for-journal";

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>(r => srv.listen(0, "127.0.0.1", r));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>(r => srv.close(() => r()));
  return port;
}

const get = async (port: number, path: string) => {
  const r = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
};

describe("waiting for the recorder to create the journal", () => {
  const tmp = tempJournalPath("krply-api-wait-");
  afterAll(() => tmp.cleanup());
  const log = logger("api");

  it("answers health 200 and everything else 503 until the journal exists, then frees its port", async () => {
    const port = await freePort();
    const never = new Promise<void>(() => undefined);
    const waiting = waitForJournal(tmp.path, {
      host: "127.0.0.1",
      port,
      pollMs: 20,
      log,
      stopped: never,
    });
    await new Promise(r => setTimeout(r, 50));
    expect(await get(port, "/v1/health")).toEqual({ status: 200, body: { status: "ok" } });
    const ready = await get(port, "/v1/ready?x=1");
    expect(ready.status).toBe(503);
    expect(ready.body).toEqual({
      error: {
        status: 503,
        code: "unavailable",
        message: `not ready: waiting for the recorder to create the journal ${tmp.path}`,
        fields: [],
      },
    });
    expect((await get(port, "/v1/streams")).status).toBe(503);
    openJournal(tmp.path).close();
    await expect(waiting).resolves.toBe(true);
    // The port is free again for the real server.
    const again = createServer();
    await new Promise<void>(r => again.listen(port, "127.0.0.1", r));
    await new Promise<void>(r => again.close(() => r()));
  });

  it("returns at once when the journal is there, and false when stopped while waiting", async () => {
    const port = await freePort();
    const never = new Promise<void>(() => undefined);
    await expect(
      waitForJournal(tmp.path, { host: "127.0.0.1", port, log, stopped: never }),
    ).resolves.toBe(true);
    let stop: () => void = () => undefined;
    const stopped = new Promise<void>(r => (stop = r));
    const waiting = waitForJournal(`${tmp.dir}/other.db`, {
      host: "127.0.0.1",
      port,
      log,
      stopped,
    });
    await new Promise(r => setTimeout(r, 50));
    stop();
    await expect(waiting).resolves.toBe(false);
  });
});
