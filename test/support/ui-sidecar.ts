// The query sidecar the web UI tests and tools open in Chromium: the real server (in this process,
// as the API's own tests start it) over a UI journal, with replay routes bound to a real target
// cluster so that plans and dry runs in the UI go to a kube-apiserver.
import { dirname, join } from "node:path";
import type { KubeClient } from "../../src/kube/client";
import {
  replayRoutes,
  ROUTES,
  startApiServer,
  type ApiServer,
  type ApiServerOptions,
} from "../../src/api";
import { buildWeb } from "../../web/build";
import { call, testServerOptions } from "./api-fixtures";
import { launchBrowser, type TestBrowser } from "./browser";
import { uiJournal, type UiJournal } from "./ui-journal";

export interface UiSidecarOptions {
  /** The cluster replay plans go to; without it the replay routes answer 503 as in a bare sidecar. */
  target?: () => Promise<KubeClient>;
  /** Anything else the test probes (authorizer, uiDir, timeouts). */
  over?: Partial<ApiServerOptions>;
  /** The bearer token rig.api sends, when the sidecar checks tokens. */
  token?: string;
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

/** Everything a UI test file needs: one browser, its own journal copy, the built UI and a sidecar. */
export interface UiRig {
  browser: TestBrowser;
  journal: UiJournal;
  sidecar: ApiServer;
  /** The UI's address of a view with its hash parameters (URL-encoded, keys sorted like the UI). */
  url(view: string, params?: Record<string, string>): string;
  /** A sidecar answer read directly (the truth the UI is compared with); throws unless 2xx. */
  api<T = unknown>(path: string, init?: RequestInit): Promise<T>;
  close(): Promise<void>;
}

/**
 * Starts the rig: Chromium, the UI journal and the UI bundle in parallel, then the sidecar serving
 * both. `target` binds the replay routes to a kube-apiserver.
 */
export async function openUiRig(opts: UiSidecarOptions = {}): Promise<UiRig> {
  const [browser, journal] = await Promise.all([launchBrowser(), uiJournal()]);
  let sidecar: ApiServer | undefined;
  try {
    const web = await buildWeb({ outDir: join(dirname(journal.path), "web") });
    sidecar = await startUiSidecar(journal.path, {
      ...opts,
      over: { uiDir: web.outDir, ...opts.over },
    });
  } catch (err) {
    await browser.close();
    journal.cleanup();
    throw err;
  }
  const server = sidecar;
  return {
    browser,
    journal,
    sidecar: server,
    url: (view, params = {}) => {
      const q = new URLSearchParams();
      for (const k of Object.keys(params).sort()) q.set(k, params[k]);
      const s = q.toString();
      return `${server.url}/#/${view}${s ? `?${s}` : ""}`;
    },
    api: async <T>(path: string, init: RequestInit = {}) => {
      const headers = new Headers(init.headers);
      if (opts.token) headers.set("authorization", `Bearer ${opts.token}`);
      if (init.body) headers.set("content-type", "application/json");
      const r = await call(server, path, { ...init, headers });
      if (r.status >= 300)
        throw new Error(`${init.method ?? "GET"} ${path}: ${r.status} ${r.text}`);
      return r.json as T;
    },
    close: async () => {
      await browser.close();
      await server.close();
      journal.cleanup();
    },
  };
}
