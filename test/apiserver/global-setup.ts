import { existsSync } from "node:fs";
import { apiServerRevision } from "./control-client";
import { startApiServer, type ApiServer } from "./index";
import { apiServerInfoEnv } from "./shared";
import { readApiServerInfo, type ApiServerInfo } from "./types";

/** State kept on globalThis between globalSetup and globalTeardown, which jest runs in its main process. */
export interface SharedApiServerState {
  server?: ApiServer;
  refs: number;
}

/** The globalThis slot both hooks use; jest runs them in one process, once per project that has tests. */
export function sharedState(): { __krplyApiServer?: SharedApiServerState } {
  return globalThis as { __krplyApiServer?: SharedApiServerState };
}

function publish(info: ApiServerInfo, infoFile: string): void {
  // Workers are forked after globalSetup, so these reach every test process.
  process.env[apiServerInfoEnv] = infoFile;
  process.env.KRPLY_APISERVER_URL = info.server;
  process.env.KRPLY_APISERVER_CA = info.caFile;
  process.env.KRPLY_APISERVER_CONTROL_URL = info.controlUrl;
  for (const [user, path] of Object.entries(info.kubeconfigs)) {
    process.env[`KRPLY_APISERVER_KUBECONFIG_${user.toUpperCase()}`] = path;
  }
}

/** Jest globalSetup: one API server per run, reused by every project and worker. */
export default async function globalSetup(): Promise<void> {
  const g = sharedState();
  if (g.__krplyApiServer) {
    g.__krplyApiServer.refs += 1;
    return;
  }
  const external = process.env[apiServerInfoEnv];
  if (external && existsSync(external)) {
    // A server from `npm run apiserver`: reuse it, and leave it running afterwards.
    const info = readApiServerInfo(external);
    await apiServerRevision(info.controlUrl).catch((err: unknown) => {
      throw new Error(
        `${apiServerInfoEnv}=${external} names a harness that does not answer: ${String(err)}`,
      );
    });
    publish(info, external);
    g.__krplyApiServer = { refs: 1 };
    return;
  }
  const server = await startApiServer();
  publish(server.info, server.infoFile);
  g.__krplyApiServer = { server, refs: 1 };
  process.stderr.write(
    `\nkube-apiserver harness ready at ${server.url} in ${server.startMillis} ms (data: ${server.dataDir})\n`,
  );
}
