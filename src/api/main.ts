// Entry point of the query sidecar (dist/api/main.js). It never loads pepr.
import { loadConfig } from "../config";
import { useNativeBinding } from "../journal";
import { logger } from "../log/logger";
import { clusterReviewApi, kubernetesAuthorizer } from "./auth";
import { noAuth, type Authorizer } from "./authorizer";
import { serverOptionsOf } from "./options";
import { startApiServer } from "./server";

const log = logger("api");

/** The authorizer of a mode: kubernetes asks the API server the sidecar runs against (./auth). */
async function authorizerFor(
  mode: "kubernetes" | "none",
): Promise<{ authorizer: Authorizer; close(): Promise<void> }> {
  if (mode === "none") return { authorizer: noAuth, close: () => Promise.resolve() };
  const reviews = await clusterReviewApi();
  return { authorizer: kubernetesAuthorizer({ api: reviews.api }), close: reviews.close };
}

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  useNativeBinding(config.sqliteBinding);
  const auth = await authorizerFor(config.api.auth);
  const server = await startApiServer(
    serverOptionsOf(config.journalPath, config.api, auth.authorizer),
  );
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, "stopping: no new connections, finishing in-flight requests");
    server
      .close()
      .then(auth.close)
      .then(
        () => {
          // Leaving on an empty event loop lets the logs flush; the timer only catches a stray handle.
          process.exitCode = 0;
          setTimeout(() => process.exit(0), 2000).unref();
        },
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
