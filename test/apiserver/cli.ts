import { rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { startApiServer } from "./index";
import { apiServerInfoEnv } from "./shared";

const usage = `Usage: npm run apiserver -- [--data-dir DIR] [--fresh] [-- extra kube-apiserver flags]

Runs kube-apiserver + embedded etcd on 127.0.0.1 in the foreground until Ctrl-C.
  --data-dir DIR  keep etcd data, certs and tokens here (default: .cache/apiserver-data, kept across runs)
  --fresh         delete the data dir first`;

function parseArgs(argv: string[]): { dataDir: string; fresh: boolean; extraArgs: string[] } {
  let dataDir = resolve(__dirname, "..", "..", ".cache", "apiserver-data");
  let fresh = false;
  const dash = argv.indexOf("--");
  const own = dash === -1 ? argv : argv.slice(0, dash);
  const extraArgs = dash === -1 ? [] : argv.slice(dash + 1);
  for (let i = 0; i < own.length; i++) {
    const arg = own[i];
    if (arg === "--data-dir" && own[i + 1]) dataDir = resolve(own[++i]);
    else if (arg === "--fresh") fresh = true;
    else {
      console.error(
        `${arg === "--help" || arg === "-h" ? "" : `unknown argument ${arg}\n`}${usage}`,
      );
      process.exit(arg === "--help" || arg === "-h" ? 0 : 2);
    }
  }
  return { dataDir, fresh, extraArgs };
}

async function main(): Promise<void> {
  const { dataDir, fresh, extraArgs } = parseArgs(process.argv.slice(2));
  if (fresh) rmSync(dataDir, { recursive: true, force: true });
  console.log(`starting kube-apiserver harness (data: ${dataDir}) ...`);
  const server = await startApiServer({ dataDir, extraArgs });
  const k = server.kubeconfigs;
  console.log(`
kube-apiserver ready at ${server.url} in ${(server.startMillis / 1000).toFixed(1)}s (pid ${server.info.pid})
  CA:         ${server.caFile}
  audit log:  ${server.auditLogPath}
  server log: ${join(server.dataDir, "apiserver.log")}
  control:    ${server.controlUrl}  (POST /compact, GET /revision, POST /shutdown, GET /egress)
  egress:     https://127.0.0.1:${server.info.egressProxyPort}  (webhooks and aggregated APIs; PUT /egress/routes maps a Service to a local port)

Point kubectl at it (admin = system:masters):
  export KUBECONFIG=${k.admin}
  kubectl get namespaces

Point krply at it as the least-privileged recorder:
  KUBECONFIG=${k.recorder} npm run krply -- --help

Other users: KUBECONFIG=${k.replayer} (replay-* namespaces), KUBECONFIG=${k.nobody} (no rights)

Let jest reuse this server instead of starting its own:
  export ${apiServerInfoEnv}=${server.infoFile}

Ctrl-C stops it; the data dir is kept, so the next run starts where this one ended.`);

  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    console.log("\nstopping ...");
    server.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error(err);
        process.exit(1);
      },
    );
  };
  void server.exited.then(() => {
    if (stopping) return;
    console.log(`kube-apiserver harness exited; see ${join(server.dataDir, "apiserver.log")}`);
    process.exit(0);
  });
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
