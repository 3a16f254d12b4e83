import type { CapabilityExport } from "pepr/dist/lib/types";

/**
 * Loads pepr.ts the way `pepr build` does: PEPR_MODE=build makes PeprModule send its capabilities over
 * process.send instead of starting a controller, so we capture that message.
 */
export function loadModuleInBuildMode(): CapabilityExport[] {
  process.env.PEPR_MODE = "build";
  const sent: unknown[] = [];
  const original = process.send;
  process.send = ((msg: unknown) => {
    sent.push(msg);
    return true;
  }) as typeof process.send;
  try {
    jest.isolateModules(() => {
      // A synchronous require is the only way to load the module inside isolateModules.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      require("../../../pepr");
    });
  } finally {
    process.send = original;
  }
  if (sent.length !== 1 || !Array.isArray(sent[0])) {
    throw new Error(`expected one capability export from the module, got ${JSON.stringify(sent)}`);
  }
  return sent[0] as CapabilityExport[];
}
