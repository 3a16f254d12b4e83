import { spawn, type ChildProcess } from "node:child_process";
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { ensureApiServerBinary } from "./build";
import {
  apiServerRevision,
  compactApiServer,
  grantReplayer,
  type CompactOptions,
  type CompactResult,
  type RevisionInfo,
} from "./control-client";
import { egressControl, type EgressControl } from "./egress-client";
import { parseApiServerInfo, type ApiServerInfo } from "./types";

export { ensureApiServerBinary } from "./build";
export {
  grantReplayer,
  type CompactOptions,
  type CompactResult,
  type RevisionInfo,
} from "./control-client";
export {
  egressControl,
  type EgressControl,
  type EgressEvent,
  type EgressLog,
  type EgressRoute,
  type HarnessCertificate,
} from "./egress-client";
export { kubeRequest, watchLines, collectEvents, type KubeResponse, type WatchEvent } from "./rest";
export { apiServerUsers, type ApiServerInfo, type ApiServerUser } from "./types";

export interface StartApiServerOptions {
  /** Reused as is when it holds an earlier run (same certs, tokens, etcd data); default: a fresh temp dir. */
  dataDir?: string;
  /** Extra kube-apiserver flags, appended last so they override the harness defaults. */
  extraArgs?: string[];
  /** How long to wait for the ready line; a cold first start on a busy 2-core machine can take a while. */
  readyTimeoutMs?: number;
}

/** A harness process this process started and owns. */
export interface ApiServer {
  readonly info: ApiServerInfo;
  readonly url: string;
  readonly caFile: string;
  readonly kubeconfigs: ApiServerInfo["kubeconfigs"];
  readonly tokens: ApiServerInfo["tokens"];
  readonly auditLogPath: string;
  readonly dataDir: string;
  readonly controlUrl: string;
  /** info.json in the data dir: the same object, for other processes (see shared.ts). */
  readonly infoFile: string;
  /** Milliseconds from spawn to the ready line for the latest (re)start. */
  readonly startMillis: number;
  /** Settles when the current harness process exits, for whatever reason. */
  readonly exited: Promise<void>;
  compact(options?: CompactOptions): Promise<CompactResult>;
  revision(): Promise<RevisionInfo>;
  grantReplayer(namespace: string): Promise<void>;
  /** The egress proxy: register local ports for Services, read what the API server dialed. */
  readonly egress: EgressControl;
  /** SIGTERM and wait for a clean exit (SIGKILL after 30 s); the data dir is kept for restart(). */
  stop(): Promise<void>;
  /** SIGKILL, as a crash would; the data dir is kept for restart(). */
  kill(): Promise<void>;
  /** Stops (or kills, with { kill: true }) and starts again on the same data dir. */
  restart(options?: { kill?: boolean }): Promise<void>;
  /** stop(), then delete the data dir if startApiServer created it. */
  dispose(): Promise<void>;
}

interface Launched {
  child: ChildProcess;
  exited: Promise<void>;
  info: ApiServerInfo;
  startMillis: number;
}

function logTail(path: string): string {
  if (!existsSync(path)) return "(no log)";
  return readFileSync(path, "utf8").split("\n").slice(-30).join("\n");
}

async function launch(
  binary: string,
  dataDir: string,
  extraArgs: string[],
  timeoutMs: number,
): Promise<Launched> {
  mkdirSync(dataDir, { recursive: true });
  const logPath = join(dataDir, "apiserver.log");
  const logFd = openSync(logPath, "a");
  const started = Date.now();
  // detached: a terminal's Ctrl-C must reach only the node parent, which then stops the server in order;
  // --exit-with-parent still ends the server if the parent dies without stopping it.
  const child = spawn(binary, ["--data-dir", dataDir, "--exit-with-parent", "--", ...extraArgs], {
    stdio: ["ignore", "pipe", logFd],
    detached: true,
  });
  closeSync(logFd);
  const exited = new Promise<void>(done => child.once("exit", () => done()));
  const lines = createInterface({ input: child.stdout! });
  const ready = new Promise<ApiServerInfo>((resolveInfo, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(
        new Error(
          `kube-apiserver harness not ready after ${timeoutMs} ms; ${logPath}:\n${logTail(logPath)}`,
        ),
      );
    }, timeoutMs);
    lines.once("line", line => {
      clearTimeout(timer);
      try {
        resolveInfo(parseApiServerInfo(line));
      } catch (err) {
        reject(new Error(`unexpected ready line from the harness: ${line} (${String(err)})`));
      }
    });
    child.once("error", err => {
      clearTimeout(timer);
      reject(err);
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(
        new Error(
          `kube-apiserver harness exited (${code ?? signal}) before ready; ${logPath}:\n${logTail(logPath)}`,
        ),
      );
    });
  });
  const info = await ready;
  return { child, exited, info, startMillis: Date.now() - started };
}

async function terminate(
  launched: Launched,
  signal: NodeJS.Signals,
  graceMs: number,
): Promise<void> {
  if (launched.child.exitCode !== null || launched.child.signalCode !== null) return;
  launched.child.kill(signal);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<"late">(done => {
    timer = setTimeout(() => done("late"), graceMs);
  });
  const outcome = await Promise.race([launched.exited, late]);
  clearTimeout(timer);
  if (outcome === "late") {
    launched.child.kill("SIGKILL");
    await launched.exited;
  }
}

/** Builds the harness if needed, starts kube-apiserver + etcd on loopback, and resolves once it is ready. */
export async function startApiServer(options: StartApiServerOptions = {}): Promise<ApiServer> {
  const binary = await ensureApiServerBinary({ echo: true });
  const ownsDataDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), "krply-apiserver-"));
  const extraArgs = options.extraArgs ?? [];
  const timeoutMs = options.readyTimeoutMs ?? 180_000;
  let current = await launch(binary, dataDir, extraArgs, timeoutMs);

  const server: ApiServer = {
    get info() {
      return current.info;
    },
    get url() {
      return current.info.server;
    },
    get caFile() {
      return current.info.caFile;
    },
    get kubeconfigs() {
      return current.info.kubeconfigs;
    },
    get tokens() {
      return current.info.tokens;
    },
    get auditLogPath() {
      return current.info.auditLogPath;
    },
    get dataDir() {
      return current.info.dataDir;
    },
    get controlUrl() {
      return current.info.controlUrl;
    },
    get infoFile() {
      return join(current.info.dataDir, "info.json");
    },
    get startMillis() {
      return current.startMillis;
    },
    get exited() {
      return current.exited;
    },
    compact: options => compactApiServer(current.info.controlUrl, options),
    revision: () => apiServerRevision(current.info.controlUrl),
    grantReplayer: namespace => grantReplayer(current.info, namespace),
    get egress() {
      return egressControl(current.info.controlUrl);
    },
    stop: () => terminate(current, "SIGTERM", 30_000),
    kill: () => terminate(current, "SIGKILL", 30_000),
    async restart(restartOptions = {}) {
      await terminate(current, restartOptions.kill ? "SIGKILL" : "SIGTERM", 30_000);
      current = await launch(binary, dataDir, extraArgs, timeoutMs);
    },
    async dispose() {
      await terminate(current, "SIGTERM", 30_000);
      if (ownsDataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return server;
}
