import { PeprValidateRequest } from "pepr";
import type { AdmissionRequest } from "pepr/dist/lib/common-types";
import { loadModuleInBuildMode } from "./helpers/load-module";

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
  const caps = loadModuleInBuildMode();

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
      expect(typeof b.watchCallback).toBe("function");
    }
    // The recorder records through its own engine, never through admission.
    expect(rec!.bindings.some(b => b.isMutate || b.isValidate)).toBe(false);
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
  });

  it("denies a labelled replay write with a clear message because no approved plan exists", async () => {
    const gate = caps.find(c => c.name === "replay-gate");
    const binding = gate!.bindings.find(b => b.isValidate)!;
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

  it("registers the snapshot capability as a schedule only (no admission or watch bindings)", () => {
    const snap = caps.find(c => c.name === "snapshots");
    expect(snap).toBeDefined();
    // Pepr 1.1.4 exports only hasSchedule in build mode; the schedule itself is checked below.
    expect(snap!.hasSchedule).toBe(true);
    expect(snap!.bindings).toEqual([]);
  });

  it("schedules the snapshot every 24 hours from a start time and logs failures instead of throwing", () => {
    let mod: typeof import("../../capabilities/snapshots") | undefined;
    let logError: jest.SpyInstance | undefined;
    const prev = process.env.KRPLY_JOURNAL;
    process.env.KRPLY_JOURNAL = "/nonexistent-krply-dir/journal.db";
    try {
      jest.isolateModules(() => {
        // Loaded in isolation so the unreachable journal path only affects this capability.
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        logError = jest.spyOn(require("pepr").Log, "error").mockImplementation(() => undefined);
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        mod = require("../../capabilities/snapshots");
      });
    } finally {
      if (prev === undefined) delete process.env.KRPLY_JOURNAL;
      else process.env.KRPLY_JOURNAL = prev;
    }
    const schedule = mod!.snapshotSchedule;
    expect(schedule).toMatchObject({ name: "krply-scheduled-snapshot", every: 24, unit: "hours" });
    expect(schedule.startTime).toBeInstanceOf(Date);
    expect(schedule.startTime.getUTCHours()).toBe(2);
    expect(() => schedule.run()).not.toThrow();
    expect(logError).toHaveBeenCalledWith(
      expect.objectContaining({ err: expect.any(Error) }),
      "krply scheduled snapshot failed",
    );
  });
});
