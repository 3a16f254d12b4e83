import { sharedState } from "./global-setup";

/** Jest globalTeardown: stops the shared API server after the last project that started it is done. */
export default async function globalTeardown(): Promise<void> {
  const g = sharedState();
  const state = g.__krplyApiServer;
  if (!state) return;
  state.refs -= 1;
  if (state.refs > 0) return;
  g.__krplyApiServer = undefined;
  if (!state.server) return;
  // KRPLY_APISERVER_KEEP=1 keeps the data dir (audit log, etcd, apiserver.log) for a post-mortem.
  if (process.env.KRPLY_APISERVER_KEEP === "1") {
    await state.server.stop();
    process.stderr.write(`kube-apiserver harness data kept in ${state.server.dataDir}\n`);
  } else {
    await state.server.dispose();
  }
}
