// Entry point of the query sidecar (dist/api/main.js). It never loads pepr.
import { loadConfig } from "../config";
import { useNativeBinding } from "../journal";
import { logger } from "../log/logger";
import { clusterReviewApi, kubernetesAuthorizer } from "./auth";
import { assertBindAllowed, noAuth, type Authorizer } from "./authorizer";
import { serverOptionsOf } from "./options";
import { startApiServer } from "./server";
import { waitForJournal } from "./wait-for-journal";

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
  let requestStop: () => void = () => undefined;
  const stopped = new Promise<void>(resolve => (requestStop = resolve));
  let stop = (signal: string) => {
    log.info({ signal }, "stopping before the query server started");
    requestStop();
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
  const auth = await authorizerFor(config.api.auth);
  const { host, port } = config.api;
  // Refused before anything listens, even the placeholder that waits for the journal.
  assertBindAllowed(host, auth.authorizer);
  if (!(await waitForJournal(config.journalPath, { host, port, log, stopped }))) {
    await auth.close();
    return;
  }
  const server = await startApiServer(
    serverOptionsOf(config.journalPath, config.api, auth.authorizer),
  );
  let stopping = false;
  stop = (signal: string) => {
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
}

main().catch((err: unknown) => {
  const e = err as Error;
  const cause = e.cause instanceof Error ? `: ${e.cause.message}` : "";
  log.fatal({ err }, "query sidecar failed to start");
  process.stderr.write(`krply-api: ${e.message}${cause}\n`);
  process.exit(1);
});
