import { existsSync } from "node:fs";
import {
  apiServerRevision,
  compactApiServer,
  grantReplayer,
  type CompactOptions,
  type CompactResult,
  type RevisionInfo,
} from "./control-client";
import { egressControl, type EgressControl } from "./egress-client";
import {
  kubeRequest,
  watchLines,
  type KubeBody,
  type KubeResponse,
  type WatchStream,
} from "./rest";
import { readApiServerInfo, type ApiServerInfo, type ApiServerUser } from "./types";

/** Env var naming the info.json of the API server shared by a jest run (set by global-setup.ts). */
export const apiServerInfoEnv = "KRPLY_APISERVER_INFO";

/** The shared API server as seen from a test worker: connection details plus control calls over HTTP. */
export interface SharedApiServer extends ApiServerInfo {
  info: ApiServerInfo;
  url: string;
  /** Compacts etcd at its current revision; every test file sharing this server sees it. */
  compact(options?: CompactOptions): Promise<CompactResult>;
  revision(): Promise<RevisionInfo>;
  grantReplayer(namespace: string): Promise<void>;
  /** The egress proxy: register local ports for Services, read what the API server dialed. */
  egress: EgressControl;
  request(
    user: ApiServerUser,
    method: string,
    path: string,
    body?: KubeBody,
    headers?: Record<string, string>,
  ): Promise<KubeResponse>;
  watch(user: ApiServerUser, path: string, headers?: Record<string, string>): Promise<WatchStream>;
}

let cached: { path: string; server: SharedApiServer } | undefined;

/**
 * Returns the API server started by the jest globalSetup of the integration and e2e projects (workers are
 * separate processes, so everything goes through info.json and HTTP). It cannot be stopped or restarted from
 * a test: a test that needs that starts its own with startApiServer() from ./index.
 */
export function sharedApiServer(): SharedApiServer {
  const path = process.env[apiServerInfoEnv];
  if (!path || !existsSync(path)) {
    throw new Error(
      `No shared API server: ${apiServerInfoEnv} is ${path ? `${path}, which does not exist` : "unset"}. ` +
        "sharedApiServer() works in the jest integration and e2e projects, whose globalSetup " +
        "(test/apiserver/global-setup.ts) starts one; or run `npm run apiserver` and export the " +
        `${apiServerInfoEnv} it prints.`,
    );
  }
  if (cached?.path === path) return cached.server;
  const info = readApiServerInfo(path);
  const server: SharedApiServer = {
    ...info,
    info,
    url: info.server,
    compact: options => compactApiServer(info.controlUrl, options),
    revision: () => apiServerRevision(info.controlUrl),
    grantReplayer: namespace => grantReplayer(info, namespace),
    egress: egressControl(info.controlUrl),
    request: (user, method, reqPath, body, headers) =>
      kubeRequest(info, user, method, reqPath, body, headers),
    watch: (user, reqPath, headers) => watchLines(info, user, reqPath, headers),
  };
  cached = { path, server };
  return server;
}
