// The web UI's files (web/dist, built by `npm run build:web`), served by the sidecar beside the API.
// The files hold no data, so they need no token; every answer they show comes from /v1 with the
// caller's bearer token. The headers forbid inline script, framing and MIME sniffing: the UI is a
// bundle of our own files and talks only to its own origin.
import { readFile } from "node:fs/promises";
import type { ServerResponse } from "node:http";
import { join, resolve } from "node:path";
import { ApiError } from "./errors";

/** Where the UI is found when no directory is given: <repo>/web/dist, from src/api and dist/api alike. */
export const DEFAULT_UI_DIR = resolve(__dirname, "../../web/dist");

export const UI_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "connect-src 'self'",
    "img-src 'self' data:",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; "),
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
};

const TYPES: Readonly<Record<string, string>> = {
  html: "text/html; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  map: "application/json; charset=utf-8",
  svg: "image/svg+xml",
  ico: "image/x-icon",
  png: "image/png",
};

/**
 * The file a request path names, or null when the path is not the UI's. Only "/", "/ui", "/ui/" and
 * flat asset names under /ui/ qualify, so no path can climb out of the directory.
 */
export function uiFileOf(pathname: string): string | null {
  if (pathname === "/" || pathname === "/ui" || pathname === "/ui/" || pathname === "/index.html")
    return "index.html";
  const m = /^\/ui\/([A-Za-z0-9_-][A-Za-z0-9_.-]{0,100})$/.exec(pathname);
  if (!m || m[1].includes("..")) return null;
  const ext = m[1].slice(m[1].lastIndexOf(".") + 1);
  return ext in TYPES && m[1].includes(".") ? m[1] : null;
}

/** Serves the UI's files from a directory. */
export interface UiFiles {
  readonly dir: string;
  /** Answers the request when its path is the UI's; false when it is not (the API's routes go on). */
  serve(pathname: string, method: string, res: ServerResponse): Promise<boolean>;
}

export function uiFiles(dir: string): UiFiles {
  return {
    dir,
    async serve(pathname, method, res) {
      if (method !== "GET" && method !== "HEAD") return false;
      const file = uiFileOf(pathname);
      if (!file) return false;
      let body: Buffer;
      try {
        body = await readFile(join(dir, file));
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code !== "ENOENT" && code !== "ENOTDIR") throw err;
        throw new ApiError(
          "not_found",
          file === "index.html"
            ? "the web UI is not built (npm run build:web)"
            : `no UI file ${file}`,
          [],
          { cause: err },
        );
      }
      res.writeHead(200, {
        ...UI_SECURITY_HEADERS,
        "content-type": TYPES[file.slice(file.lastIndexOf(".") + 1)],
        "content-length": String(body.length),
        // index.html names the bundle; it must be fetched anew so a rebuilt UI is picked up.
        "cache-control": "no-cache",
      });
      res.end(method === "HEAD" ? undefined : body);
      return true;
    },
  };
}
