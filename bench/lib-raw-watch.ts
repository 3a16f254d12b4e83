// The raw baseline of bench/scale.ts's lag: a plain watch client (lib-raw-watch-child.ts) on the same
// collections as the recorder, in its own process, stamping when each RV arrives. Lag from a write's
// acknowledgement to that arrival is the API server's own delivery; what the recorder shows beyond it
// is what the recorder adds (parse, encode, commit, checkpoint).
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";

export interface RawWatch {
  /** The client's process (its CPU is charged to it in bench/lib-scale-phases.ts). */
  pid: number;
  /** When the raw client received the event of each RV (ms since epoch). */
  arrivals: Map<number, number>;
  stop(): Promise<void>;
}

/** Starts the raw client on `paths`; resolves once every watch is open. */
export async function startRawWatch(kubeconfig: string, paths: string[]): Promise<RawWatch> {
  // The bench runs under tsx: the child gets the same loader flags, so it runs the TypeScript as is.
  const child: ChildProcess = spawn(
    process.execPath,
    [...process.execArgv, join(__dirname, "lib-raw-watch-child.ts"), kubeconfig, ...paths],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  const arrivals = new Map<number, number>();
  const lines = createInterface({ input: child.stdout! });
  await new Promise<void>((resolve, reject) => {
    const failed = (code: number | null) =>
      reject(new Error(`raw watch client exited (${code}) before its watches opened`));
    child.once("exit", failed);
    lines.on("line", line => {
      if (line === "ready") {
        child.off("exit", failed);
        resolve();
        return;
      }
      const sp = line.indexOf(" ");
      arrivals.set(Number(line.slice(0, sp)), Number(line.slice(sp + 1)));
    });
  });
  return {
    pid: child.pid!,
    arrivals,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = new Promise(r => child.once("exit", r));
      child.kill("SIGTERM");
      await gone;
    },
  };
}
