import { PeprValidateRequest } from "pepr";
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

  it("exports exactly the recorder, the replay gate and the snapshots, in that order", () => {
    expect(caps.map(c => c.name)).toEqual(["recorder", "replay-gate", "snapshots"]);
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

  it("binds the gate as a label-filtered Validate on create and update of any kind", () => {
    const gate = caps.find(c => c.name === "replay-gate");
    const validate = gate?.bindings.filter(b => b.isValidate) ?? [];
    expect(validate).toHaveLength(1);
    expect(validate[0].event).toBe("CREATEORUPDATE");
    expect(validate[0].kind.kind).toBe("");
    expect(validate[0].filters.labels).toEqual({ "krply.dev/plan": "" });
    expect(validate[0].validateCallback).toBe("function");
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
  it("denies a labelled replay write with a clear message because no approved plan exists", async () => {
    const binding = ReplayGate.bindings.find(b => b.isValidate)!;
    const req = new PeprValidateRequest(
      admission({ "krply.dev/plan": "p-123" }, "krply-plan-p-123"),
    );
    const res = await binding.validateCallback!(req);
    expect(res.allowed).toBe(false);
    expect(res.statusMessage).toMatch(
      /krply replay gate denied CREATE of ConfigMap replay-a\/app-config/,
    );
    expect(res.statusMessage).toMatch(/no approved replay plan/);
  });

  it("schedules the snapshot every 24 hours from a start time and reports failures instead of throwing", () => {
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
    expect(run).toEqual({ ok: false, error: expect.any(Error) });
    expect(run!.ok === false && run!.error.message).toMatch(/only where krply records/);
  });
});
