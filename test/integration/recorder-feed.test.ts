// ADR 0001 evidence as a test: the same faulty workload through the KFC/Pepr feed and through our engine.
import { startApiServer, type ApiServer } from "../apiserver";
import { compareFeeds } from "./recorder-feed-comparison";

jest.setTimeout(600_000);

describe("feed comparison (ADR 0001)", () => {
  let server: ApiServer;
  beforeAll(async () => {
    server = await startApiServer();
  });
  afterAll(async () => {
    await server?.dispose();
  });

  it("our engine loses nothing unmarked, never reorders or duplicates; the Pepr feed is measured alongside", async () => {
    const { rows, script } = await compareFeeds({
      url: server.url,
      kubeconfigs: server.kubeconfigs,
      restart: () => server.restart(),
      compact: () => server.compact(),
    });
    console.log(JSON.stringify({ script, rows }, null, 1));
    const engine = rows.find(r => r.feed === "krply stream engine")!;
    expect(engine).toMatchObject({
      unmarkedGaps: 0,
      unmarkedLost: 0,
      outOfOrder: 0,
      duplicates: 0,
    });
    // At most one GAP (the compaction); none when the engine's RV was still inside etcd's window.
    expect(engine.gapRecords).toBeLessThanOrEqual(1);
    if (engine.gapRecords === 0) expect(engine.lostVersions).toBe(0);
  });
});
