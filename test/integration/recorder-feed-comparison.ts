// The evidence for ADR 0001: one faulty workload observed at once through the kubernetes-fluent-client
// Watcher (what Pepr .Watch()/.Reconcile() ride on, configured with Pepr's defaults) and through our engine.
import { readFileSync, writeFileSync } from "node:fs";
import { createServer, connect, type Server, type Socket } from "node:net";
import { K8s, kind } from "kubernetes-fluent-client";
import { streamIdOf } from "../../src/event";
import type { JournalRecord } from "../../src/event/schema";
import { KubeClient, loadKubeConfig } from "../../src/kube/client";
import { tempJournalPath } from "../support/journal-fixtures";
import { clusterIdentity } from "../../src/watch/cluster-identity";
import { allRecords, cmKey, rig, until } from "./recorder-support";
import {
  createConfigMaps,
  deliveriesOf,
  ensureNamespace,
  gapWindows,
  runWriters,
  verify,
  type Ack,
  type Delivery,
} from "./recorder-workload";

/** What the comparison needs from an API server it may restart and compact. */
export interface FaultServer {
  url: string;
  kubeconfigs: { admin: string; recorder: string };
  restart(): Promise<void>;
  compact(): Promise<unknown>;
}

export interface FeedRow {
  feed: string;
  acked: number;
  delivered: number;
  lostVersions: number;
  outOfOrder: number;
  duplicates: number;
  /** Faults after which versions were lost with no GAP record saying so. */
  unmarkedGaps: number;
  /** Lost versions that no GAP record covers. */
  unmarkedLost: number;
  gapRecords: number;
}

/** A TCP proxy in front of the API server whose link both feeds share; cut() is a network partition. */
export async function partitionProxy(target: string): Promise<{
  port: number;
  cut(ms: number, during?: () => Promise<unknown>): Promise<void>;
  close(): Promise<void>;
}> {
  const url = new URL(target);
  const open = new Set<Socket>();
  let down = false;
  const server: Server = createServer(client => {
    if (down) return void client.destroy();
    const up = connect(Number(url.port), url.hostname);
    open.add(client);
    open.add(up);
    const drop = () => {
      open.delete(client);
      open.delete(up);
      client.destroy();
      up.destroy();
    };
    client.on("error", drop).on("close", drop);
    up.on("error", drop).on("close", drop);
    client.pipe(up).pipe(client);
  });
  await new Promise<void>(r => server.listen(0, "127.0.0.1", r));
  return {
    port: (server.address() as { port: number }).port,
    async cut(ms, during) {
      down = true;
      for (const s of open) s.destroy();
      // The fault runs at the end of the cut, after writes piled up that the feeds have not seen.
      await new Promise(r => setTimeout(r, ms));
      await during?.();
      down = false;
    },
    close: () =>
      new Promise<void>(r => {
        for (const s of open) s.destroy();
        server.close(() => r());
      }),
  };
}

/** A copy of a kubeconfig that reaches the server through the proxy (same host, so TLS still matches). */
function viaProxy(kubeconfig: string, port: number): string {
  const out = `${kubeconfig}.proxy-${port}.yaml`;
  writeFileSync(
    out,
    readFileSync(kubeconfig, "utf8").replace(/(server: https:\/\/127\.0\.0\.1:)\d+/, `$1${port}`),
  );
  return out;
}

// Pepr 1.1.4's defaults for the watch config (PEPR_RESYNC_*, PEPR_RELIST_INTERVAL_SECONDS, ...).
const peprWatchCfg = {
  resyncFailureMax: 5,
  resyncDelaySec: 5,
  lastSeenLimitSeconds: 300,
  relistIntervalSec: 600,
};

function unmarkedGaps(
  acks: Ack[],
  seen: Set<string>,
  faultsAt: number[],
  windows: { from: number; to: number }[],
) {
  let n = 0;
  const bounds = [...faultsAt, Number.MAX_SAFE_INTEGER];
  for (let i = 0; i < faultsAt.length; i++) {
    const inWindow = acks.slice(bounds[i], bounds[i + 1]);
    const lostUnmarked = inWindow.some(a => {
      if (seen.has(`${a.ns}/${a.name}@${a.rv}`)) return false;
      const rv = Number(a.rv);
      return !windows.some(w => rv > w.from && rv <= w.to);
    });
    if (lostUnmarked) n++;
  }
  return n;
}

function row(
  feed: string,
  acks: Ack[],
  d: Delivery[],
  faultsAt: number[],
  recs: JournalRecord[] = [],
): FeedRow {
  const windows = gapWindows(recs);
  const v = verify(acks, d, windows);
  const seen = new Set(d.map(x => `${x.ns}/${x.name}@${x.rv}`));
  return {
    feed,
    acked: v.acked,
    delivered: v.delivered,
    lostVersions: v.lost,
    outOfOrder: v.outOfOrder,
    duplicates: v.duplicates,
    unmarkedGaps: unmarkedGaps(acks, seen, faultsAt, windows),
    unmarkedLost: v.unmarkedLost,
    gapRecords: recs.filter(r => r.type === "gap").length,
  };
}

/** Runs the fault script (partitions, a compaction inside one, a restart) through both feeds at once. */
export async function compareFeeds(
  srv: FaultServer,
  total = 2000,
): Promise<{ rows: FeedRow[]; script: string[] }> {
  const admin = await KubeClient.create(loadKubeConfig({ kubeconfig: srv.kubeconfigs.admin }));
  const ns = `feed-${Date.now().toString(36)}`;
  await ensureNamespace(admin, ns);
  const targets = (await createConfigMaps(admin, ns, 50)).map(a => ({ ns, name: a.name }));
  const clusterId = (await clusterIdentity(admin)).clusterId;

  // Both feeds reach the server through one proxy; the writers do not, so writes go on during a cut.
  const proxy = await partitionProxy(srv.url);

  // Feed 1: the KFC Watcher, the way Pepr starts it, with admin rights so RBAC plays no part.
  process.env.KUBECONFIG = viaProxy(srv.kubeconfigs.admin, proxy.port);
  const kfc: Delivery[] = [];
  let kfcSeq = 0;
  const watcher = K8s(kind.ConfigMap)
    .InNamespace(ns)
    .Watch(o => {
      const m = o.metadata!;
      kfc.push({ ns: m.namespace!, name: m.name!, rv: m.resourceVersion!, seq: kfcSeq++ });
    }, peprWatchCfg);
  await watcher.start();

  // Feed 2: our engine; a backoff of 1-2 s lets the compaction land before it reconnects.
  const tmp = tempJournalPath("krply-feed-");
  const r = await rig(
    srv.kubeconfigs.recorder,
    { backoffMinMs: 1000, backoffMaxMs: 2000 },
    tmp.path,
  );
  const key = cmKey(clusterId, ns);
  const id = streamIdOf(key);
  r.supervisor.add({ key, kind: "ConfigMap", path: `/api/v1/namespaces/${ns}/configmaps` });
  await until(
    "engine baseline",
    () => r.journal.streams().find(s => s.streamId === id)?.baselinePresent,
  );
  await new Promise(res => setTimeout(res, 1000)); // KFC lists and opens its watch on its own schedule

  let acked = 0;
  const script: string[] = [];
  const faultsAt: number[] = [];
  const writing = runWriters({
    client: admin,
    targets,
    writers: 2,
    total,
    retry: true,
    onAck: () => void acked++,
  });
  const at = (n: number) => until(`${n} acks`, () => acked >= n, 180_000, 10);
  await at(total * 0.2);
  faultsAt.push(acked);
  await proxy.cut(3000);
  script.push(
    `after ${faultsAt.at(-1)} writes: 3 s network partition between the feeds and the server`,
  );
  await at(total * 0.4);
  faultsAt.push(acked);
  await proxy.cut(3000, () => srv.compact());
  script.push(`after ${faultsAt.at(-1)} writes: 3 s partition with an etcd compaction inside it`);
  await at(total * 0.6);
  faultsAt.push(acked);
  await srv.restart();
  script.push(`after ${faultsAt.at(-1)} writes: API-server restart`);
  await at(total * 0.8);
  faultsAt.push(acked);
  await proxy.cut(1000);
  script.push(`after ${faultsAt.at(-1)} writes: 1 s partition`);
  const { acks } = await writing;
  const lastRv = acks.reduce((m, a) => Math.max(m, Number(a.rv)), 0);
  await until(
    "engine caught up",
    () =>
      Number(r.journal.streams().find(s => s.streamId === id)?.lastResourceVersion ?? 0) >= lastRv,
    60_000,
  );
  // KFC's relist after a restart is what brings it level; give it the same chance.
  await until("KFC caught up", () => kfc.some(d => Number(d.rv) >= lastRv), 60_000).catch(
    () => undefined,
  );
  watcher.close();
  await proxy.close();
  const recs = allRecords(r.journal, id);
  await r.close();
  await admin.close();
  tmp.cleanup();
  // The order in which acks arrived defines the fault windows; sort by RV so windows are contiguous.
  const sorted = [...acks].sort((a, b) => Number(a.rv) - Number(b.rv));
  return {
    rows: [
      row("Pepr .Watch/.Reconcile feed (KFC Watcher)", sorted, kfc, faultsAt),
      row("krply stream engine", sorted, deliveriesOf(recs), faultsAt, recs),
    ],
    script,
  };
}
