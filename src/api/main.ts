// Entry point of the query sidecar (dist/api/main.js). It never loads pepr.
import { loadConfig } from "../config";
import { logger } from "../log/logger";
import { noAuth, type Authorizer } from "./authorizer";
import { serverOptionsOf } from "./options";
import { startApiServer } from "./server";

const log = logger("api");

/** The authorizer of a mode. The kubernetes mode comes from ./auth (TokenReview + SubjectAccessReview). */
function authorizerFor(mode: "kubernetes" | "none"): Authorizer {
  if (mode === "none") return noAuth;
  throw new Error(
    'auth mode "kubernetes" is not available in this build yet; set KRPLY_API_AUTH=none with KRPLY_API_HOST=127.0.0.1',
  );
}

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const server = await startApiServer(
    serverOptionsOf(config.journalPath, config.api, authorizerFor(config.api.auth)),
  );
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, "stopping: no new connections, finishing in-flight requests");
    server.close().then(
      () => process.exit(0),
      (err: unknown) => {
        log.error({ err }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
}

main().catch((err: unknown) => {
  const e = err as Error;
  const cause = e.cause instanceof Error ? `: ${e.cause.message}` : "";
  log.fatal({ err }, "query sidecar failed to start");
  process.stderr.write(`krply-api: ${e.message}${cause}\n`);
  process.exit(1);
});
