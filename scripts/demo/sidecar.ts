// The query sidecar over the demo journal, without auth, on loopback only.
import { existsSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { freePort } from "../../test/support/net";
import type { Child, Children } from "./children";

export { freePort };

/** GET on the sidecar; resolves the status code, or 0 when nothing answers. */
export function httpStatus(url: string, timeoutMs = 2000): Promise<number> {
  return new Promise(resolve => {
    const req = request(url, { timeout: timeoutMs }, res => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", () => resolve(0));
    req.on("timeout", () => req.destroy());
    req.end();
  });
}

/** Starts the built sidecar (dist/api/main.js) if there is one, else its sources through tsx. */
export function startSidecar(
  children: Children,
  opts: { root: string; journalPath: string; port: number },
): Child {
  const built = join(opts.root, "dist", "api", "main.js");
  const [command, args] = existsSync(built)
    ? [process.execPath, [built]]
    : // node with tsx's loader, not the tsx CLI: that CLI relays signals and SIGKILLs a slow child.
      [process.execPath, ["--import", "tsx", join(opts.root, "src", "api", "main.ts")]];
  return children.spawn("query sidecar", command, args, {
    cwd: opts.root,
    env: {
      ...process.env,
      KRPLY_JOURNAL: opts.journalPath,
      KRPLY_API_AUTH: "none",
      KRPLY_API_HOST: "127.0.0.1",
      KRPLY_API_PORT: String(opts.port),
      KRPLY_LOG_LEVEL: "warn",
    },
  });
}

/** Waits until the sidecar answers /v1/ready with 200, or its process ends. */
export async function waitForSidecar(child: Child, url: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let ended = false;
  void child.exited.then(() => (ended = true));
  while ((await httpStatus(`${url}/v1/ready`)) !== 200) {
    if (ended) throw new Error(`the query sidecar exited:\n${child.output()}`);
    if (Date.now() > deadline) {
      throw new Error(`the query sidecar did not get ready in ${timeoutMs} ms:\n${child.output()}`);
    }
    await new Promise(r => setTimeout(r, 200));
  }
}

/** Where the web UI is, or how to build it. */
export function uiLine(root: string, apiUrl: string): string {
  if (existsSync(join(root, "web", "dist", "index.html"))) {
    return `web UI: ${apiUrl}/ (built in web/dist)`;
  }
  return "web UI: not built (web/dist is missing); run `npm run build:web`, then start the demo again";
}
