import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import {
  cm,
  json,
  listOf,
  startFakeApi,
  status,
  type FakeApi,
  type Responder,
} from "../../test/fakeapi";
import {
  damagedJournalRecords,
  damagePages,
  garbleRecordBody,
  writeJournal,
} from "../../test/support/damaged-journal";
import { tempJournalPath } from "../../test/support/journal-fixtures";
import { KubeClient, loadKubeConfig } from "../kube/client";
import { Recorder, type RecorderConfig } from "./recorder";

async function until<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise(r => setTimeout(r, 20));
  }
}

const answers: Record<string, Responder> = {
  "/api/v1": res =>
    json(res, 200, {
      kind: "APIResourceList",
      groupVersion: "v1",
      resources: [
        {
          name: "configmaps",
          singularName: "configmap",
          namespaced: true,
          kind: "ConfigMap",
          verbs: ["get", "list", "watch"],
        },
      ],
    }),
  "/apis": res => json(res, 200, { kind: "APIGroupList", groups: [] }),
  "/api/v1/configmaps": listOf(10, [cm("a", 5)]),
};
const byPath: Responder = (res, req) => (answers[req.path] ?? (r => json(r, 404, {})))(res, req);

const counterValue = async (r: Recorder, name: "startFailures" | "journalOpenFailures") =>
  (await r.metrics[name].get()).values.reduce((n, v) => n + v.value, 0);
const gaugeValue = async (r: Recorder, name: "ready" | "refused") =>
  (await r.metrics[name].get()).values[0]?.value;

describe("Recorder start", () => {
  let fake: FakeApi;
  let client: KubeClient;
  let tmp: ReturnType<typeof tempJournalPath>;
  let recorder: Recorder | undefined;

  const config = (over: Partial<RecorderConfig> = {}): RecorderConfig => ({
    journalPath: tmp.path,
    selection: { resources: ["configmaps"], namespaces: [], selector: "" },
    mirrorEveryMs: 60_000,
    journalRetryMs: 20,
    startRetryMaxMs: 100,
    ...over,
  });

  beforeEach(async () => {
    fake = await startFakeApi();
    client = await KubeClient.create(loadKubeConfig({ kubeconfig: fake.kubeconfig }));
    tmp = tempJournalPath("krply-recorder-");
  });
  afterEach(async () => {
    await recorder?.stop();
    recorder = undefined;
    await client.close();
    await fake.close();
    tmp.cleanup();
  });

  it("retries a failed start with backoff, reports it through health and metrics, then records", async () => {
    // Discovery fails twice (the API server restarting), then answers.
    fake.onList(status(503, "ServiceUnavailable"), status(503, "ServiceUnavailable"));
    fake.onList(...Array.from({ length: 10 }, () => byPath));
    recorder = new Recorder(config(), { client });
    const started = recorder.start();
    await until(
      "a failed start",
      async () => (await counterValue(recorder!, "startFailures")) >= 1,
    );
    expect(["retrying", "starting"]).toContain(recorder.health().state);
    expect(recorder.health().ready).toBe(false);
    expect(await gaugeValue(recorder, "ready")).toBe(0);
    await started;
    expect(recorder.health()).toMatchObject({ state: "running", failedStarts: 2 });
    expect(recorder.health().lastError).toMatch(/503/);
    expect(await counterValue(recorder, "startFailures")).toBe(2);
    await until("the stream watching", () => recorder!.status()[0]?.phase === "watching");
    // Ready once every stream holds its baseline and the journal took the appends.
    expect(recorder.health()).toMatchObject({
      ready: true,
      reasons: [],
      journal: { open: true, appendError: null },
      streams: { total: 1, baselined: 1, waiting: [], unavailable: [] },
    });
    // The gauge gives the same verdict as the probe.
    expect(await gaugeValue(recorder, "ready")).toBe(1);
  });

  it("the CLI (journalRetryMs 0) still fails at once", async () => {
    fake.onList(status(503, "ServiceUnavailable"));
    recorder = new Recorder(config({ journalRetryMs: 0 }), { client });
    await expect(recorder.start()).rejects.toThrow(/503/);
  });

  it("refuses a journal whose newest pages are damaged once, with a clear status, and never writes to it or re-checks it", async () => {
    writeJournal(tmp.path, damagedJournalRecords(400));
    damagePages(tmp.path, 0.85, 1000);
    const digest = () => createHash("sha256").update(readFileSync(tmp.path)).digest("hex");
    const before = digest();
    fake.onList(...Array.from({ length: 10 }, () => byPath));
    recorder = new Recorder(config(), { client });
    await recorder.start();
    expect(recorder.health()).toMatchObject({ state: "refused", ready: false });
    expect(recorder.health().lastError).toMatch(/damaged/);
    expect(recorder.health().reasons).toEqual([
      expect.stringMatching(/journal is refused.*damaged/),
    ]);
    expect(await gaugeValue(recorder, "refused")).toBe(1);
    // Many retry periods later: one check, no retry loop, no request to the cluster, the file untouched.
    await new Promise(r => setTimeout(r, 300));
    expect(await counterValue(recorder, "journalOpenFailures")).toBe(1);
    expect(fake.requests).toEqual([]);
    expect(recorder.openJournal).toBeNull();
    expect(digest()).toBe(before);
  });

  it("starts on a journal with an old damaged record: the start checks only the newest records, and the full check is fsck's", async () => {
    // Start-up stays short however large the journal: a full check at open would decode every record
    // (and refuse this file) before the first watch.
    writeJournal(tmp.path, damagedJournalRecords(1700));
    garbleRecordBody(tmp.path, 2);
    fake.onList(...Array.from({ length: 10 }, () => byPath));
    recorder = new Recorder(config(), { client });
    await recorder.start();
    expect(recorder.health()).toMatchObject({ state: "running", lastError: null });
    await until("the stream watching", () => recorder!.status()[0]?.phase === "watching");
    expect(await counterValue(recorder, "journalOpenFailures")).toBe(0);
    // The scheduled full check (and `krply fsck`) decodes every record and finds the damage.
    const report = await recorder.runScheduledFsck();
    expect(report?.ok).toBe(false);
    expect(recorder.health()).toMatchObject({ state: "refused", ready: false });
  });

  it("the scheduled full check finds damage that appears while recording, and stops recording", async () => {
    writeJournal(tmp.path, damagedJournalRecords(1700));
    fake.onList(...Array.from({ length: 10 }, () => byPath));
    recorder = new Recorder(config(), { client });
    await recorder.start();
    expect(recorder.health()).toMatchObject({ state: "running", lastError: null });
    await until("the stream watching", () => recorder!.status()[0]?.phase === "watching");
    // A failing disk damages old pages under the running recorder, which does not read them.
    damagePages(tmp.path, 0.2, 2);
    // The event loop keeps turning while the check runs: it yields between slices.
    let turns = 0;
    const ticker = setInterval(() => turns++, 0);
    const report = await recorder.runScheduledFsck();
    clearInterval(ticker);
    expect(turns).toBeGreaterThan(0);
    expect(report?.ok).toBe(false);
    expect(recorder.health()).toMatchObject({ state: "refused", ready: false });
    expect(recorder.health().lastError).toMatch(/damaged/);
    expect(recorder.status()).toEqual([]);
    expect(recorder.openJournal).toBeNull();
    expect(await gaugeValue(recorder, "refused")).toBe(1);
  });
});
