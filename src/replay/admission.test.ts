import { gateRequestOf, planAdmissionOf } from "./admission";

describe("gateRequestOf", () => {
  it("reads the server-side apply field manager, the object's identity and labels", () => {
    expect(
      gateRequestOf({
        operation: "CREATE",
        kind: { group: "apps", kind: "Deployment" },
        name: "",
        namespace: "replay-a",
        object: {
          metadata: { name: "web", namespace: "replay-a", labels: { "krply.dev/plan": "p1" } },
        },
        options: { kind: "CreateOptions", fieldManager: "krply-plan-p1" },
        dryRun: false,
      }),
    ).toEqual({
      operation: "CREATE",
      kind: "Deployment",
      group: "apps",
      namespace: "replay-a",
      name: "web",
      labels: { "krply.dev/plan": "p1" },
      fieldManager: "krply-plan-p1",
      dryRun: false,
    });
  });

  it("falls back to the request's name and namespace and tolerates missing options", () => {
    const req = gateRequestOf({
      operation: "UPDATE",
      kind: { group: "", kind: "Namespace" },
      name: "replay-a",
      object: {},
      dryRun: true,
    });
    expect(req).toMatchObject({ namespace: "", name: "replay-a", labels: {}, dryRun: true });
    expect(req.fieldManager).toBeUndefined();
  });
});

describe("planAdmissionOf", () => {
  it("takes the user from userInfo, never from the object", () => {
    expect(
      planAdmissionOf({
        operation: "UPDATE",
        kind: { group: "krply.dev", kind: "ReplayPlan" },
        userInfo: { username: "alice" },
        object: { spec: { approvedBy: "mallory" } },
        oldObject: { spec: {} },
      }),
    ).toEqual({
      operation: "UPDATE",
      user: "alice",
      object: { spec: { approvedBy: "mallory" } },
      oldObject: { spec: {} },
    });
  });
});
