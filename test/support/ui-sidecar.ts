// The query sidecar the web UI tests and tools open in Chromium: the real server (in this process,
// as the API's own tests start it) over a UI journal, with replay routes bound to a real target
// cluster so that plans and dry runs in the UI go to a kube-apiserver.
import type { KubeClient } from "../../src/kube/client";
import {
  replayRoutes,
  ROUTES,
  startApiServer,
  type ApiServer,
  type ApiServerOptions,
} from "../../src/api";
import { testServerOptions } from "./api-fixtures";

export interface UiSidecarOptions {
  /** The cluster replay plans go to; without it the replay routes answer 503 as in a bare sidecar. */
  target?: () => Promise<KubeClient>;
  /** Anything else the test probes (authorizer, uiDir, timeouts). */
  over?: Partial<ApiServerOptions>;
}

/** The sidecar's routes with the replay group bound to `target`. */
export function uiRoutes(target?: () => Promise<KubeClient>): ApiServerOptions["routes"] {
  if (!target) return ROUTES;
  const replay = replayRoutes({ target });
  const isReplay = (path: string) => replay.some(r => r.path === path);
  return [...ROUTES.filter(r => !isReplay(r.path)), ...replay];
}

/** Starts the sidecar on a free loopback port over `journalPath`. */
export function startUiSidecar(
  journalPath: string,
  opts: UiSidecarOptions = {},
): Promise<ApiServer> {
  return startApiServer(
    testServerOptions(journalPath, { routes: uiRoutes(opts.target), ...opts.over }),
  );
}
