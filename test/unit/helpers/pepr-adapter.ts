// The one place the tests reach into Pepr: how `pepr build` sees the module, and the types a Validate
// binding takes. Both come from Pepr's public API, so no test imports pepr/dist/lib/*.
import { fork } from "node:child_process";
import type { Capability, PeprValidateRequest } from "pepr";

/** An admission request as Pepr hands it to a Validate binding. */
export type AdmissionRequest = ConstructorParameters<typeof PeprValidateRequest>[0];

type Binding = Capability["bindings"][number];

/** A binding as `pepr build` receives it: functions cannot cross processes, so each is the marker "function". */
export type ExportedBinding = {
  [K in keyof Binding]: NonNullable<Binding[K]> extends (...args: never[]) => unknown
    ? "function" | undefined
    : Binding[K];
};

/** One capability of the module's build-mode export. */
export interface ExportedCapability {
  name: string;
  description: string;
  namespaces: string[];
  bindings: ExportedBinding[];
  hasSchedule: boolean;
}

/**
 * Loads pepr.ts the way `pepr build` does: in a child process with PEPR_MODE=build, where PeprModule
 * sends its capabilities to the parent instead of starting a controller, and where Pepr registers every
 * binding, watch ones included. The test's own process and environment stay untouched.
 */
export function buildModeExport(timeoutMs = 60_000): Promise<ExportedCapability[]> {
  return new Promise((resolve, reject) => {
    const child = fork(__filename, [], {
      execArgv: ["--require", require.resolve("tsx/cjs")],
      env: { ...process.env, PEPR_MODE: "build" },
      stdio: ["ignore", "ignore", "pipe", "ipc"],
    });
    let stderr = "";
    let exported: unknown;
    child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("message", message => (exported = message));
    const timer = setTimeout(() => child.kill(), timeoutMs);
    child.on("error", err => {
      clearTimeout(timer);
      reject(new Error("cannot start the module in build mode", { cause: err }));
    });
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      if (Array.isArray(exported)) resolve(exported as ExportedCapability[]);
      else {
        const how = signal ? `was killed (${signal})` : `exited with ${code}`;
        reject(new Error(`the module in build mode ${how} without its export:\n${stderr}`));
      }
    });
  });
}

// In the child: forward the module's export with every function replaced by its marker.
if (require.main === module) {
  const send = process.send?.bind(process);
  if (!send) throw new Error("pepr-adapter runs as the child of buildModeExport()");
  process.send = ((message: unknown) =>
    send(
      JSON.parse(
        JSON.stringify(message, (_key, value: unknown) =>
          typeof value === "function" ? "function" : value,
        ),
      ),
    )) as typeof process.send;
  // pepr.ts is the module under build; loading it is the point, so a synchronous require is right here.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  require("../../../pepr");
}
