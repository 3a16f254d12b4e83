import { existsSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { Logger } from "../log/logger";
import { ApiError } from "./errors";

export interface WaitOptions {
  host: string;
  port: number;
  pollMs?: number;
  log: Logger;
  /** Resolves the wait early (false) when the process is asked to stop. */
  stopped: Promise<void>;
}

/**
 * At a first install the sidecar can start before the recorder has created the journal. Exiting
 * would crash-loop the container until it exists, and a missing port fails the liveness probe; so
 * until the file appears the sidecar answers on its port: /v1/health 200 (the process is fine),
 * everything else 503 saying what it waits for. Resolves true once the journal exists, false when
 * stopped first; either way the placeholder has closed its port.
 */
export async function waitForJournal(path: string, opts: WaitOptions): Promise<boolean> {
  if (existsSync(path)) return true;
  const waiting = new ApiError(
    "unavailable",
    `not ready: waiting for the recorder to create the journal ${path}`,
  );
  const server: Server = createServer((req, res) => {
    const health = req.url?.split("?")[0] === "/v1/health";
    const body = health ? { status: "ok" } : waiting.body();
    res.writeHead(health ? 200 : 503, { "content-type": "application/json", "retry-after": "5" });
    res.end(JSON.stringify(body));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host, resolve);
  });
  opts.log.info({ path }, "the journal does not exist yet; waiting for the recorder to create it");
  const every = opts.pollMs ?? 1000;
  let timer: NodeJS.Timeout | undefined;
  const appeared = new Promise<boolean>(resolve => {
    const poll = () => (existsSync(path) ? resolve(true) : (timer = setTimeout(poll, every)));
    poll();
  });
  const found = await Promise.race([appeared, opts.stopped.then(() => false)]);
  clearTimeout(timer);
  server.closeAllConnections();
  await new Promise<void>(resolve => server.close(() => resolve()));
  if (found) opts.log.info({ path }, "the journal exists; starting the query server");
  return found;
}
