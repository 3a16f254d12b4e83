// Traces of watch errors and reconnects (issue 13), against the scripted fake: a real API server
// does not send a non-410 ERROR event on demand.
import { streamIdOf } from "../../src/event";
import { chunks, cm, line, listOf, startFakeApi, type FakeApi } from "../fakeapi";
import { allRecords, cmKey, fastEngine, rig, until, type Rig } from "./recorder-support";

jest.setTimeout(60_000);

const key = cmKey("fake");
const id = streamIdOf(key);
const spec = { key, kind: "ConfigMap", path: "/api/v1/configmaps" };

describe("watch errors and reconnects leave a trace", () => {
  let fake: FakeApi;
  let r: Rig;

  beforeEach(async () => {
    fake = await startFakeApi();
  });
  afterEach(async () => {
    await r?.close();
    await fake.close();
  });

  it("a non-410 ERROR event is counted, kept in the journal at its place, and the stream resumes", async () => {
    fake.onList(listOf(10, []));
    const failure = {
      kind: "Status",
      apiVersion: "v1",
      status: "Failure",
      reason: "InternalError",
      code: 500,
      message: "etcd is having a moment",
    };
    fake.onWatch(
      chunks([line("ADDED", cm("a", 11)), line("ERROR", failure)]),
      chunks([line("MODIFIED", cm("a", 12))], { keepOpen: true }),
    );
    r = await rig(fake.kubeconfig, fastEngine);
    r.supervisor.add(spec);
    const second = await fake.waitForWatch(2);
    expect(second.query.get("resourceVersion")).toBe("11");
    await until("the event after the reconnect", () =>
      allRecords(r.journal, id).some(x => x.resource?.resourceVersion === "12"),
    );
    const recs = allRecords(r.journal, id).filter(x => x.type === "event");
    expect(recs.map(x => x.watchType)).toEqual(["ADDED", "ERROR", "MODIFIED"]);
    expect(recs[1].object).toMatchObject({ code: 500, message: "etcd is having a moment" });
    expect(r.journal.gaps(id)).toHaveLength(0);
    const errors = await r.supervisor.metrics.registry.getSingleMetricAsString(
      "krply_watch_errors_total",
    );
    expect(errors).toContain(`krply_watch_errors_total{stream="${id}",code="500"} 1`);
    const reconnects =
      await r.supervisor.metrics.registry.getSingleMetricAsString("krply_reconnects_total");
    expect(reconnects).toMatch(/krply_reconnects_total\{stream="[^"]+",kind="http"\} 1/);
  });
});
