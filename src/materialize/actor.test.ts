import { auditCorrelationRecord, eventRecord, type KubeObject, type StreamKey } from "../event";
import { openJournal } from "../journal";
import { tempJournalPath } from "../../test/support/journal-fixtures";
import { actorFromManagedFields } from "./actor";
import { timeline } from "./timeline";

const stream: StreamKey = {
  clusterId: "c1",
  group: "",
  version: "v1",
  resource: "configmaps",
  namespace: "",
  selector: "",
};
const at = (s: number) => new Date(Date.UTC(2026, 0, 1) + s * 1000).toISOString();

function cm(rv: number, data: Record<string, string>, managers: [string, string][]): KubeObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: "cfg",
      namespace: "shop",
      uid: "u1",
      resourceVersion: String(rv),
      managedFields: managers.map(([manager, time]) => ({
        manager,
        operation: "Update",
        time,
        fieldsType: "FieldsV1",
        fieldsV1: { "f:data": {} },
      })),
    },
    data,
  };
}

describe("actor", () => {
  it("names the managedFields entry this version wrote, and nobody for a delete", () => {
    const before = cm(1, { a: "1" }, [
      ["helm", at(0)],
      ["kubectl", at(1)],
    ]);
    const after = cm(2, { a: "2" }, [
      ["helm", at(5)],
      ["kubectl", at(1)],
    ]);
    expect(actorFromManagedFields("MODIFIED", after, before)).toMatchObject({
      source: "managedFields",
      manager: "helm",
      time: at(5),
    });
    expect(actorFromManagedFields("DELETED", after, before).source).toBe("unknown");
  });

  it("names the manager whose owned fields changed when every time stayed within the same second", () => {
    const owning = (manager: string, fields: Record<string, unknown>) => ({
      manager,
      operation: manager === "deployer" ? "Apply" : "Update",
      time: at(0),
      fieldsType: "FieldsV1",
      fieldsV1: fields,
    });
    const before = cm(1, { a: "1" }, []);
    before.metadata.managedFields = [
      owning("deployer", { "f:data": { "f:a": {} } }),
      owning("editor", { "f:data": { "f:b": {} } }),
    ];
    const after = cm(2, { a: "1", b: "2", c: "3" }, []);
    after.metadata.managedFields = [
      owning("deployer", { "f:data": { "f:a": {} } }),
      owning("editor", { "f:data": { "f:b": {}, "f:c": {} } }),
    ];
    expect(actorFromManagedFields("MODIFIED", after, before)).toMatchObject({ manager: "editor" });
    // The applier loses a field to the editor's patch and is restamped: the editor still wrote it.
    const taken = cm(3, { a: "4", b: "2", c: "3" }, []);
    taken.metadata.managedFields = [
      { ...owning("deployer", { "f:data": {} }), time: at(9) },
      { ...owning("editor", { "f:data": { "f:a": {}, "f:b": {}, "f:c": {} } }), time: at(9) },
    ];
    expect(actorFromManagedFields("MODIFIED", taken, after)).toMatchObject({ manager: "editor" });
  });

  it("shows the audit user in the timeline when a correlation exists, managedFields otherwise", () => {
    const tmp = tempJournalPath("krply-actor-");
    const j = openJournal(tmp.path);
    try {
      const first = eventRecord({
        stream,
        watchType: "ADDED",
        object: cm(1, { a: "1" }, [["kubectl", at(1)]]),
        observedAt: at(1),
      });
      const second = eventRecord({
        stream,
        watchType: "MODIFIED",
        object: cm(2, { a: "2" }, [["kubectl", at(2)]]),
        observedAt: at(2),
      });
      j.append({ records: [first, second], checkpoints: [], streams: [stream] });
      j.append({
        records: [
          auditCorrelationRecord(
            second.streamId,
            "c1",
            second.resource!,
            {
              auditId: "a1",
              stage: "ResponseComplete",
              code: 200,
              user: "alice",
              verb: "patch",
              userAgent: "kubectl/v1.37",
              sourceIPs: ["10.0.0.1"],
            },
            second.observedAt,
          ),
        ],
        checkpoints: [],
      });
      const t = timeline(j, "c1", { kind: "ConfigMap", namespace: "shop", name: "cfg" });
      expect(t.data.map(e => e.actor)).toEqual([
        { source: "managedFields", manager: "kubectl", operation: "Update", time: at(1) },
        {
          source: "audit",
          user: "alice",
          verb: "patch",
          auditId: "a1",
          userAgent: "kubectl/v1.37",
          sourceIPs: ["10.0.0.1"],
        },
      ]);
    } finally {
      j.close();
      tmp.cleanup();
    }
  });
});
