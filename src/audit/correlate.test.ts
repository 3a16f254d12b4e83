import { eventRecord, type KubeObject, type StreamKey } from "../event";
import { openJournal, type Journal } from "../journal";
import { auditLine } from "../../test/support/audit-fixtures";
import { tempJournalPath } from "../../test/support/journal-fixtures";
import { AuditIngestor } from "./ingest";

const stream: StreamKey = {
  clusterId: "c1",
  group: "",
  version: "v1",
  resource: "configmaps",
  namespace: "",
  selector: "",
};

function cm(name: string, uid: string, rv: number, data: Record<string, string>): KubeObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace: "shop", uid, resourceVersion: String(rv) },
    data,
  };
}

const T0 = Date.parse("2026-01-01T10:00:00Z");
const at = (s: number) => new Date(T0 + s * 1000).toISOString();

describe("audit correlation", () => {
  let tmp: ReturnType<typeof tempJournalPath>;
  let journal: Journal;
  let now = T0;

  beforeEach(() => {
    tmp = tempJournalPath("krply-audit-");
    journal = openJournal(tmp.path);
    now = T0;
  });
  afterEach(() => {
    journal.close();
    tmp.cleanup();
  });

  function record(obj: KubeObject, type: "ADDED" | "MODIFIED" | "DELETED", s: number): void {
    journal.append({
      records: [eventRecord({ stream, watchType: type, object: obj, observedAt: at(s) })],
      checkpoints: [],
      streams: [stream],
    });
  }

  function ingestor(): AuditIngestor {
    return new AuditIngestor(journal, { clusterId: "c1", pendingMs: 30_000, now: () => now });
  }

  const created = cm("web", "u1", 10, { a: "1" });
  const createLine = (stage: "RequestReceived" | "ResponseComplete" = "ResponseComplete") =>
    auditLine({
      auditId: "req-1",
      stage,
      verb: "create",
      user: "alice",
      userAgent: "kubectl/v1.37",
      resource: "configmaps",
      namespace: "shop",
      name: "web",
      code: 201,
      request: { kind: "ConfigMap", data: { a: "1" } },
      response: created,
      at: at(0),
    });

  it("matches a write after its watch event, with user, agent and source IPs", () => {
    record(created, "ADDED", 1);
    const ing = ingestor();
    ing.ingestLines([createLine()]);
    expect(ing.counts.matched).toBe(1);
    const [[c]] = journal.auditCorrelations([
      { streamId: "c1/-/v1/configmaps/-/-", observedAt: at(1), resourceVersion: "10" },
    ]);
    expect(c.audit).toMatchObject({
      auditId: "req-1",
      stage: "ResponseComplete",
      code: 201,
      user: "alice",
      userAgent: "kubectl/v1.37",
      sourceIPs: ["10.0.0.7"],
      verb: "create",
    });
    // Nothing of the request or response body is kept.
    expect(JSON.stringify(c)).not.toContain('"data"');
  });

  it("matches a write whose audit event arrives before the watch event", () => {
    const ing = ingestor();
    ing.ingestLines([createLine()]);
    expect(ing.counts).toMatchObject({ matched: 0, pending: 1 });
    record(created, "ADDED", 2);
    now += 1000;
    ing.correlator.retry();
    expect(ing.counts).toMatchObject({ matched: 1, pending: 0, unmatched: 0 });
  });

  it("keeps the stages of one request as distinct records, and re-ingesting adds nothing", () => {
    record(created, "ADDED", 1);
    const ing = ingestor();
    const lines = [createLine("RequestReceived"), createLine("ResponseComplete")];
    ing.ingestLines(lines);
    expect(ing.counts.written).toBe(2);
    const [found] = journal.auditCorrelations([
      { streamId: "c1/-/v1/configmaps/-/-", observedAt: at(1), resourceVersion: "10" },
    ]);
    expect(found.map(r => r.audit!.stage).sort()).toEqual(["RequestReceived", "ResponseComplete"]);
    const before = journal.recordCount();
    const again = ingestor();
    again.ingestLines(lines);
    expect(journal.recordCount()).toBe(before);
    expect(again.counts).toMatchObject({ written: 0, duplicate: 2 });
  });

  it("matches a delete, answered by a Status, by the object's uid", () => {
    record(created, "ADDED", 1);
    record(cm("web", "u1", 12, { a: "1" }), "DELETED", 5);
    const ing = ingestor();
    ing.ingestLines([
      auditLine({
        auditId: "req-del",
        verb: "delete",
        user: "bob",
        resource: "configmaps",
        namespace: "shop",
        name: "web",
        response: { kind: "Status", details: { uid: "u1" } },
        at: at(4),
      }),
    ]);
    expect(ing.counts.matched).toBe(1);
    const [[c]] = journal.auditCorrelations([
      { streamId: "c1/-/v1/configmaps/-/-", observedAt: at(5), resourceVersion: "12" },
    ]);
    expect(c.audit!.user).toBe("bob");
  });

  it("counts and skips malformed, huge, failed and unknown-object lines", () => {
    record(created, "ADDED", 1);
    const ing = new AuditIngestor(journal, {
      clusterId: "c1",
      pendingMs: 30_000,
      maxLineBytes: 4096,
      now: () => now,
    });
    ing.ingestLines([
      "{not json",
      JSON.stringify({ kind: "Event", auditID: "x" }),
      "x".repeat(5000),
      auditLine({
        auditId: "req-403",
        verb: "create",
        user: "eve",
        resource: "configmaps",
        namespace: "shop",
        name: "web",
        code: 403,
        at: at(0),
      }),
      auditLine({
        auditId: "req-unknown",
        verb: "update",
        user: "eve",
        resource: "configmaps",
        namespace: "shop",
        name: "never-recorded",
        response: cm("never-recorded", "u9", 99, {}),
        at: at(0),
      }),
      createLine(),
    ]);
    expect(ing.counts).toMatchObject({ malformed: 2, huge: 1, ignored: 1, matched: 1, pending: 1 });
    now += 60_000;
    ing.correlator.retry();
    expect(ing.counts).toMatchObject({ unmatched: 1, pending: 0 });
  });

  it("takes an EventList from the webhook backend", () => {
    record(created, "ADDED", 1);
    const ing = ingestor();
    const r = ing.ingestEventList({
      kind: "EventList",
      apiVersion: "audit.k8s.io/v1",
      items: [JSON.parse(createLine()), { bogus: true }],
    });
    expect(r).toEqual({ accepted: 1, malformed: 1 });
    expect(ing.counts.matched).toBe(1);
  });
});
