import { PeprMutateRequest, PeprValidateRequest } from "pepr";
import { ReplayApproval } from "../../capabilities/replay-approval";
import { ReplayGate } from "../../capabilities/replay-gate";
import { snapshotSchedule } from "../../capabilities/snapshots";
import {
  buildModeExport,
  type AdmissionRequest,
  type ExportedCapability,
} from "./helpers/pepr-adapter";

function admission(labels: Record<string, string>, fieldManager?: string): AdmissionRequest {
  const object = {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "app-config", namespace: "replay-a", labels },
    data: { a: "1" },
  };
  return {
    uid: "req-1",
    kind: { group: "", version: "v1", kind: "ConfigMap" },
    resource: { group: "", version: "v1", resource: "configmaps" },
    name: "app-config",
    namespace: "replay-a",
    operation: "CREATE",
    userInfo: { username: "replayer" },
    object,
    options: fieldManager ? { fieldManager } : {},
    dryRun: false,
  } as unknown as AdmissionRequest;
}

describe("krply Pepr module in build mode", () => {
  let caps: ExportedCapability[];

  beforeAll(async () => {
    caps = await buildModeExport();
  }, 90_000);

  it("exports exactly the recorder, the replay gate, replay approval and the snapshots, in that order", () => {
    expect(caps.map(c => c.name)).toEqual([
      "recorder",
      "replay-gate",
      "replay-approval",
      "snapshots",
    ]);
  });

  it("registers the recorder capability with Reconcile bindings on CustomResourceDefinitions", () => {
    const rec = caps.find(c => c.name === "recorder");
    expect(rec).toBeDefined();
    const reconcile = rec!.bindings.filter(b => b.isWatch && b.isQueue);
    expect(reconcile.map(b => b.event).sort()).toEqual(["CREATEORUPDATE", "DELETE"]);
    for (const b of reconcile) {
      expect(b.kind).toMatchObject({
        group: "apiextensions.k8s.io",
        kind: "CustomResourceDefinition",
      });
      expect(b.watchCallback).toBe("function");
    }
    // The recorder records through its own engine, never through admission.
    expect(rec!.bindings.some(b => b.isMutate || b.isValidate)).toBe(false);
    expect(rec!.bindings).toHaveLength(2);
  });

  it("registers the replay gate capability", () => {
    expect(caps.map(c => c.name)).toEqual(expect.arrayContaining(["replay-gate"]));
  });

  it("binds the gate as a label-filtered Validate on create and update of any group and kind", () => {
    const gate = caps.find(c => c.name === "replay-gate");
    const validate = gate?.bindings.filter(b => b.isValidate) ?? [];
    // One binding decides (an empty group filters nothing); the other widens the webhook rule to
    // apiGroups ["*"] and never matches Pepr's filter.
    expect(validate.map(b => b.kind.group)).toEqual(["", "*"]);
    for (const b of validate) {
      expect(b.event).toBe("CREATEORUPDATE");
      expect(b.kind.kind).toBe("");
      expect(b.kind.plural).toBe("*");
      expect(b.filters.labels).toEqual({ "krply.dev/plan": "" });
      expect(b.validateCallback).toBe("function");
    }
    expect(gate?.bindings.some(b => b.isMutate || b.isWatch)).toBe(false);
  });

  it("binds Mutate, Validate and Reconcile on krply.dev/v1alpha1 ReplayPlans", () => {
    const approval = caps.find(c => c.name === "replay-approval");
    const bindings = approval?.bindings ?? [];
    for (const b of bindings) {
      expect(b.kind).toMatchObject({
        group: "krply.dev",
        version: "v1alpha1",
        kind: "ReplayPlan",
        plural: "replayplans",
      });
      expect(b.event).toBe("CREATEORUPDATE");
    }
    expect(bindings.filter(b => b.isMutate)).toHaveLength(1);
    expect(bindings.filter(b => b.isValidate)).toHaveLength(1);
    expect(bindings.filter(b => b.isWatch && b.isQueue)).toHaveLength(1);
  });

  it("registers the snapshot capability as a schedule only (no admission or watch bindings)", () => {
    const snap = caps.find(c => c.name === "snapshots");
    expect(snap).toBeDefined();
    // Pepr 1.1.4 exports only hasSchedule in build mode; the schedule itself is checked below.
    expect(snap!.hasSchedule).toBe(true);
    expect(snap!.bindings).toEqual([]);
  });
});

// This process is neither the watcher nor `pepr dev`, like an admission pod: Pepr registers the
// Validate binding here, and the runtime neither records nor snapshots.
describe("krply capability handlers in an admission process", () => {
  it("denies a labelled replay write, failing closed when no plan can be read", async () => {
    const binding = ReplayGate.bindings.find(b => b.isValidate)!;
    const req = new PeprValidateRequest(
      admission({ "krply.dev/plan": "p-123" }, "krply-plan-p-123"),
    );
    const res = await binding.validateCallback!(req);
    expect(res.allowed).toBe(false);
    expect(res.statusMessage).toMatch(
      /^krply replay gate denied CREATE of ConfigMap replay-a\/app-config \(plan p-123\): /,
    );
  });

  it("admits a labelled dry run without reading any plan", async () => {
    const binding = ReplayGate.bindings.find(b => b.isValidate)!;
    const req = { ...admission({ "krply.dev/plan": "p-123" }), dryRun: true } as AdmissionRequest;
    expect((await binding.validateCallback!(new PeprValidateRequest(req))).allowed).toBe(true);
  });

  it("stamps the creator of a ReplayPlan from userInfo and labels it with its plan id", async () => {
    const mutate = ReplayApproval.bindings.find(b => b.isMutate)!;
    const validate = ReplayApproval.bindings.find(b => b.isValidate)!;
    const object = {
      apiVersion: "krply.dev/v1alpha1",
      kind: "ReplayPlan",
      metadata: { name: "p-1" },
      spec: { planId: "p-1", createdBy: "mallory", approved: false },
    };
    const request = {
      uid: "req-2",
      kind: { group: "krply.dev", version: "v1alpha1", kind: "ReplayPlan" },
      resource: { group: "krply.dev", version: "v1alpha1", resource: "replayplans" },
      name: "p-1",
      operation: "CREATE",
      userInfo: { username: "carol" },
      object,
    } as unknown as AdmissionRequest;
    const wrapped = new PeprMutateRequest(request);
    await mutate.mutateCallback!(wrapped);
    expect(wrapped.Raw.metadata?.labels).toEqual({ "krply.dev/plan-id": "p-1" });
    // A self-declared creator is left for the Validate binding to refuse by name.
    const res = await validate.validateCallback!(
      new PeprValidateRequest({ ...request, object: wrapped.Raw } as AdmissionRequest),
    );
    expect(res.allowed).toBe(false);
    expect(res.statusMessage).toContain('it must be "carol", not "mallory"');
  });

  it("schedules the snapshot every 24 hours from a start time and reports failures instead of throwing", async () => {
    expect(snapshotSchedule).toMatchObject({
      name: "krply-scheduled-snapshot",
      every: 24,
      unit: "hours",
    });
    expect(snapshotSchedule.startTime).toBeInstanceOf(Date);
    expect(snapshotSchedule.startTime.getUTCHours()).toBe(2);
    let run: ReturnType<typeof snapshotSchedule.run> | undefined;
    expect(() => (run = snapshotSchedule.run())).not.toThrow();
    // No journal is touched where krply does not record; src/runtime.test.ts checks the failure log.
    const done = await run!;
    expect(done).toEqual({ ok: false, error: expect.any(Error) });
    expect(done.ok === false && done.error.message).toMatch(/only where krply records/);
  });
});
