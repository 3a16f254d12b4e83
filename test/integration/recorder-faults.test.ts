// Faults a real API server will not produce on demand, against the scripted fake (test/fakeapi).
import { streamIdOf } from "../../src/event";
import {
  chunks,
  cm,
  cutAfter,
  line,
  listOf,
  stall,
  startFakeApi,
  status,
  type FakeApi,
} from "../fakeapi";
import { allRecords, cmKey, eventRvs, fastEngine, rig, until, type Rig } from "./recorder-support";

jest.setTimeout(60_000);

const key = cmKey("fake");
const id = streamIdOf(key);
const spec = { key, kind: "ConfigMap", path: "/api/v1/configmaps" };

describe("recorder stream engine against the fault-injecting fake", () => {
  let fake: FakeApi;
  let r: Rig;

  beforeEach(async () => {
    fake = await startFakeApi();
  });
  afterEach(async () => {
    await r?.close();
    await fake.close();
  });

  async function start(engine = fastEngine): Promise<void> {
    r = await rig(fake.kubeconfig, engine);
    r.supervisor.add(spec);
  }

  it("parses lines torn across chunks, even inside a multi-byte character", async () => {
    fake.onList(listOf(10, [cm("a", 5)]));
    const text =
      line("ADDED", cm("b", 11, { v: "héllo ✓ 😀" })) +
      line("MODIFIED", cm("a", 12, { v: "ünïcode" })) +
      line("DELETED", cm("b", 13, { v: "héllo ✓ 😀" }));
    const bytes = Buffer.from(text);
    // Cut into 7-byte pieces: boundaries fall inside JSON tokens and inside UTF-8 sequences.
    const pieces: Buffer[] = [];
    for (let i = 0; i < bytes.length; i += 7) pieces.push(bytes.subarray(i, i + 7));
    fake.onWatch(chunks(pieces, { gapMs: 1 }));
    await start();
    await until("three events", () => eventRvs(allRecords(r.journal, id)).length === 3);
    const recs = allRecords(r.journal, id).filter(x => x.type === "event");
    expect(recs.map(x => [x.watchType, x.resource!.resourceVersion])).toEqual([
      ["ADDED", "11"],
      ["MODIFIED", "12"],
      ["DELETED", "13"],
    ]);
    expect((recs[0].object as unknown as { data: { v: string } }).data.v).toBe("héllo ✓ 😀");
    const second = await fake.waitForWatch(2);
    expect(second.query.get("resourceVersion")).toBe("13");
    expect(r.supervisor.status()[0].malformed).toBe(0);
  });

  it("counts a malformed line, reconnects from the last durable RV and loses nothing", async () => {
    fake.onList(listOf(10, []));
    fake.onWatch(
      chunks([line("ADDED", cm("a", 11)), "{this is not json\n", line("MODIFIED", cm("a", 12))]),
      chunks([line("MODIFIED", cm("a", 12)), line("MODIFIED", cm("a", 13))], { keepOpen: true }),
    );
    await start();
    const second = await fake.waitForWatch(2);
    expect(second.query.get("resourceVersion")).toBe("11");
    await until("events 11..13", () => eventRvs(allRecords(r.journal, id)).length === 3);
    expect(eventRvs(allRecords(r.journal, id))).toEqual(["11", "12", "13"]);
    const st = r.supervisor.status()[0];
    expect(st.malformed).toBe(1);
    expect(r.journal.gaps(id)).toHaveLength(0);
    const text = await r.supervisor.metrics.registry.getSingleMetricAsString(
      "krply_malformed_lines_total",
    );
    expect(text).toMatch(/krply_malformed_lines_total\{stream="[^"]+"\} 1/);
  });

  it("honours Retry-After on 429", async () => {
    fake.onList(status(429, "TooManyRequests", "1"), listOf(10, []));
    await start({ ...fastEngine, backoffMinMs: 10, backoffMaxMs: 20 });
    await fake.waitForWatch(1);
    const lists = fake.requests.filter(q => !q.watch && q.path === "/api/v1/configmaps");
    expect(lists).toHaveLength(2);
    // The backoff bounds are 10-20 ms; only the header explains a wait of about a second.
    expect(lists[1].at - lists[0].at).toBeGreaterThanOrEqual(950);
  });

  it("reconnects a stream that stays silent past its limit, from the durable RV", async () => {
    fake.onList(listOf(10, []));
    fake.onWatch(
      chunks([line("ADDED", cm("a", 11))], { keepOpen: true }),
      stall,
      chunks([line("MODIFIED", cm("a", 12))], { keepOpen: true }),
    );
    await start({ ...fastEngine, silenceMs: 400 });
    const third = await fake.waitForWatch(3);
    expect(fake.requests.filter(q => q.watch)[1].query.get("resourceVersion")).toBe("11");
    expect(third.query.get("resourceVersion")).toBe("11");
    await until("event 12", () => eventRvs(allRecords(r.journal, id)).includes("12"));
    expect(eventRvs(allRecords(r.journal, id))).toEqual(["11", "12"]);
    expect(r.journal.gaps(id)).toHaveLength(0);
  });

  it("survives a connection cut in the middle of an event", async () => {
    fake.onList(listOf(10, []));
    const text =
      line("ADDED", cm("a", 11)) + line("MODIFIED", cm("a", 12, { big: "x".repeat(500) }));
    const cutAt = line("ADDED", cm("a", 11)).length + 200;
    fake.onWatch(
      cutAfter(text, cutAt),
      chunks([line("MODIFIED", cm("a", 12, { big: "x".repeat(500) }))], { keepOpen: true }),
    );
    await start();
    const second = await fake.waitForWatch(2);
    expect(second.query.get("resourceVersion")).toBe("11");
    await until("event 12", () => eventRvs(allRecords(r.journal, id)).includes("12"));
    expect(eventRvs(allRecords(r.journal, id))).toEqual(["11", "12"]);
    expect(r.journal.gaps(id)).toHaveLength(0);
  });

  it("turns a 410 ERROR event into one GAP, a relist and a new BASELINE", async () => {
    fake.onList(listOf(10, [cm("a", 5)]), listOf(20, [cm("a", 19)]));
    fake.onWatch(
      chunks([
        line("MODIFIED", cm("a", 11)),
        line("ERROR", { kind: "Status", code: 410, reason: "Expired", message: "too old" }),
      ]),
    );
    await start();
    const second = await fake.waitForWatch(2);
    expect(second.query.get("resourceVersion")).toBe("20");
    const recs = allRecords(r.journal, id);
    const kinds = recs.map(x => (x.type === "baseline" && !x.object ? "marker" : x.type));
    expect(kinds).toEqual(["baseline", "marker", "event", "gap", "baseline", "marker"]);
    const gap = recs.find(x => x.type === "gap")!;
    expect(gap.gap!.lastGoodResourceVersion).toBe("11");
    expect(r.journal.streams().find(s => s.streamId === id)!.lastResourceVersion).toBe("20");
  });

  it("writes COVERAGE_CHANGE unavailable on 403 and available when access returns", async () => {
    fake.onList(status(403, "Forbidden"), status(403, "Forbidden"), listOf(10, []));
    await start();
    await fake.waitForWatch(1);
    await until("coverage available", () =>
      allRecords(r.journal, id).some(x => x.coverage?.state === "available"),
    );
    const cov = allRecords(r.journal, id).filter(x => x.type === "coverage_change");
    expect(cov.map(x => [x.coverage!.state, x.coverage!.httpStatus])).toEqual([
      ["unavailable", 403],
      ["available", undefined],
    ]);
  });
});
