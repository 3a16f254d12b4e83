import { attributeChange, attributeChanges, attributeTimelineChanges } from "./attribution";
import { fieldDiff } from "./field-diff";
import { parsePath } from "./path";

function version(replicas: number, image: string, managed: unknown[]) {
  return {
    metadata: { name: "web", managedFields: managed },
    spec: {
      replicas,
      template: { spec: { containers: [{ name: "web", image }] } },
    },
  };
}

const applied = {
  manager: "kubectl-client-side-apply",
  operation: "Update",
  time: "2024-01-01T00:00:00Z",
  fieldsType: "FieldsV1",
  fieldsV1: {
    "f:spec": {
      "f:template": {
        "f:spec": { "f:containers": { 'k:{"name":"web"}': { ".": {}, "f:image": {} } } },
      },
    },
  },
};

describe("attribution from managedFields", () => {
  it("names the manager that owns each changed field in the later version", () => {
    const edit = {
      manager: "kubectl-edit",
      operation: "Update",
      time: "2024-01-01T02:14:07Z",
      fieldsType: "FieldsV1",
      fieldsV1: { "f:spec": { "f:replicas": {} } },
    };
    const before = version(1, "web:1", [applied]);
    const after = version(3, "web:2", [applied, edit]);
    const changes = attributeChanges(fieldDiff(before, after), before, after).filter(
      c => !c.path.startsWith("metadata"),
    );
    expect(changes.map(c => [c.path, c.managers[0]?.manager, c.managers[0]?.time])).toEqual([
      ["spec.replicas", "kubectl-edit", "2024-01-01T02:14:07Z"],
      [
        "spec.template.spec.containers[name=web].image",
        "kubectl-client-side-apply",
        "2024-01-01T00:00:00Z",
      ],
    ]);
    expect(changes[0].managers[0]).toMatchObject({ operation: "Update", basis: "exact" });
  });

  it("gives a timeline each change with its path once, as text that parses back to its segments", () => {
    const before = version(1, "web:1", [applied]);
    const after = version(3, "web:2", [applied]);
    // A key with a dot and a list item whose key value reads as a number: the hard cases to print.
    before.metadata = { ...before.metadata, labels: { "app.kubernetes.io/name": "a" } } as never;
    after.metadata = { ...after.metadata, labels: { "app.kubernetes.io/name": "b" } } as never;
    after.spec.template.spec.containers.push({ name: "7", image: "side:1" });
    const diff = fieldDiff(before, after);
    const full = attributeChanges(diff, before, after);
    const compact = attributeTimelineChanges(diff, before, after);
    // The same change less the segments, and less added / removed where they are false.
    const expected = full.map(c =>
      Object.fromEntries(
        Object.entries(c).filter(
          ([k, v]) => k !== "segments" && !((k === "added" || k === "removed") && v === false),
        ),
      ),
    );
    expect(compact.map(c => Object.keys(c))).toEqual(expected.map(c => Object.keys(c)));
    expect(compact).toEqual(expected);
    expect(compact.filter(c => c.added).map(c => c.path)).toEqual([
      'spec.template.spec.containers[name="7"]',
    ]);
    expect(compact.map(c => parsePath(c.path))).toEqual(diff.map(c => c.segments));
    expect(compact.map(c => c.path)).toContain("metadata.labels.app\\.kubernetes\\.io/name");
  });

  it("attributes a removed field to the managers that wrote since the earlier version", () => {
    const before = { metadata: { managedFields: [{ ...applied }] }, spec: { paused: true } };
    const later = {
      ...applied,
      manager: "kubectl-client-side-apply",
      time: "2024-01-02T00:00:00Z",
    };
    const after = { metadata: { managedFields: [later] }, spec: {} };
    const [change] = fieldDiff(before.spec, after.spec);
    const shifted = { ...change, segments: ["spec", ...change.segments] };
    expect(attributeChange(shifted, before, after)).toEqual([
      {
        manager: "kubectl-client-side-apply",
        operation: "Update",
        time: "2024-01-02T00:00:00Z",
        basis: "wrote-since",
      },
    ]);
  });

  it("keeps the subresource so status writers are told apart", () => {
    const status = {
      manager: "kube-controller-manager",
      operation: "Update",
      subresource: "status",
      time: "2024-01-01T00:00:05Z",
      fieldsType: "FieldsV1",
      fieldsV1: { "f:status": { "f:readyReplicas": {} } },
    };
    const before = { metadata: { managedFields: [status] }, status: { readyReplicas: 1 } };
    const after = { metadata: { managedFields: [status] }, status: { readyReplicas: 2 } };
    const [change] = fieldDiff(before, after).filter(c => c.path.startsWith("status"));
    expect(attributeChange(change, before, after)[0]).toMatchObject({
      manager: "kube-controller-manager",
      subresource: "status",
    });
  });
});
