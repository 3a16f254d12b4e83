import {
  auditCorrelationRecord,
  baselineRecords,
  eventRecord,
  gapRecord,
  type StreamKey,
} from "../../event";
import { openJournal } from "../../journal";
import { at, configMap, tempJournalPath } from "../../../test/support/journal-fixtures";
import { captureKrply } from "../../../test/support/cli-capture";

const cms: StreamKey = {
  clusterId: "c1",
  group: "",
  version: "v1",
  resource: "configmaps",
  namespace: "",
  selector: "",
};

const run = (store: string, ...args: string[]) => captureKrply("--store", store, ...args);

describe("krply history commands over a local journal", () => {
  const tmp = tempJournalPath("krply-cli-");
  beforeAll(() => {
    const j = openJournal(tmp.path);
    j.append({
      records: [
        ...baselineRecords({
          stream: cms,
          listResourceVersion: "5",
          listedAt: at(1),
          objects: [configMap("app", "shop", "u1", 5, { a: "1" })],
          kind: "ConfigMap",
        }),
        eventRecord({
          stream: cms,
          watchType: "MODIFIED",
          object: configMap("app", "shop", "u1", 6, { a: "2" }),
          observedAt: at(10),
        }),
        gapRecord({
          stream: cms,
          lastGoodResourceVersion: "6",
          reason: "410 Gone",
          detectedAt: at(20),
        }),
      ],
      checkpoints: [],
      streams: [cms],
    });
    j.close();
  });
  afterAll(() => tmp.cleanup());

  const gapWarning = /WARNING: .*gap from .* to now \(unresolved\) \(410 Gone\)/;

  it("prints each answer with its coverage warnings beside it", async () => {
    expect(await run(tmp.path, "coverage")).toMatch(gapWarning);
    expect(await run(tmp.path, "status")).toMatch(/open gaps +1[\s\S]*WARNING: .*410 Gone/);
    const tl = await run(tmp.path, "timeline", "cm/app", "-n", "shop");
    expect(tl).toMatch(/6 +MODIFIED .*data\.a/);
    expect(tl).toMatch(gapWarning);
    const yaml = await run(tmp.path, "reconstruct", "configmap/app", "-n", "shop", "--at", at(30));
    expect(yaml).toMatch(/^# event MODIFIED rv=6 .*\(inside a gap\)\n[\s\S]*data:\n {2}a: "2"/);
    expect(yaml).toMatch(/WARNING: .*gap/);
    const d = await run(tmp.path, "diff", "-n", "shop", "--since", at(2), "--until", at(30));
    expect(d).toMatch(/\[HAS GAPS\][\s\S]*data\.a: "1" -> "2"[\s\S]*WARNING/);
    expect(await run(tmp.path, "search", "ap")).toMatch(/ConfigMap +shop +app .*uncertain/);
  });

  it("stores an incomplete snapshot and lists it, with Missing in the warnings", async () => {
    const snap = await run(tmp.path, "snapshot", "--at", at(30), "--name", "t30");
    expect(snap).toMatch(/snapshot t30 .*INCOMPLETE, 1 objects/);
    expect(snap).toMatch(/MISSING/);
    const list = await run(tmp.path, "snapshot", "list");
    expect(list).toMatch(/t30 .* NO +1/);
    expect(list).toMatch(
      /WARNING: snapshot t30 .* is incomplete: missing c1\/-\/v1\/configmaps\/-\/-/,
    );
  });

  it("computes a snapshot without storing it when asked (the journal takes one writer)", async () => {
    const out = JSON.parse(
      await run(tmp.path, "-o", "json", "snapshot", "--at", at(30), "--no-record"),
    );
    expect(out.data).toMatchObject({ id: null, objectCount: 1, complete: false });
    const list = JSON.parse(await run(tmp.path, "-o", "json", "snapshot", "list"));
    expect(list.data.map((s: { name: string }) => s.name)).toEqual(["t30"]);
  });

  it("gives machine-readable answers with warnings inside", async () => {
    const out = JSON.parse(
      await run(tmp.path, "-o", "json", "diff", "--since", at(2), "--until", at(30)),
    );
    expect(out.data.hasGaps).toBe(true);
    expect(out.data.objects[0].changes[0]).toMatchObject({
      path: "data.a",
      before: "1",
      after: "2",
    });
    expect(out.warnings.length).toBeGreaterThan(0);
  });

  it("rejects bad input with a clear message", async () => {
    await expect(run(tmp.path, "timeline", "web")).rejects.toThrow(/<kind>\/<name>/);
    await expect(run(tmp.path, "diff", "--since", "yesterday")).rejects.toThrow(/not a time/);
  });
});

describe("krply who", () => {
  it("lists changes grouped by actor, the audit user where one was correlated", async () => {
    const tmp = tempJournalPath("krply-cli-who-");
    try {
      const j = openJournal(tmp.path);
      const created = eventRecord({
        stream: cms,
        watchType: "ADDED",
        object: configMap("app", "shop", "u1", 5, { a: "1" }),
        observedAt: at(5),
      });
      const changed = eventRecord({
        stream: cms,
        watchType: "MODIFIED",
        object: configMap("app", "shop", "u1", 6, { a: "2" }),
        observedAt: at(10),
      });
      j.append({ records: [created, changed], checkpoints: [], streams: [cms] });
      const audit = {
        auditId: "r1",
        stage: "ResponseComplete",
        code: 200,
        user: "alice",
        verb: "patch",
      };
      j.append({
        records: [auditCorrelationRecord(changed.streamId, "c1", changed.resource!, audit, at(10))],
        checkpoints: [],
      });
      j.close();
      const out = await run(tmp.path, "who", "-n", "shop", "--since", at(0), "--until", at(30));
      expect(out).toMatch(/^ACTOR +SOURCE +OBSERVED/);
      expect(out).toMatch(/alice +audit +\S+ +MODIFIED +ConfigMap\/app +shop +6/);
      expect(out).toMatch(/\(unknown\) +unknown +\S+ +ADDED +ConfigMap\/app +shop +5/);
      const tl = await run(tmp.path, "timeline", "cm/app", "-n", "shop");
      expect(tl).toMatch(/6 +MODIFIED +\S+ +alice +audit/);
    } finally {
      tmp.cleanup();
    }
  });
});
