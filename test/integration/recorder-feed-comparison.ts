// The evidence for ADR 0001: one faulty workload observed at once through the kubernetes-fluent-client
// Watcher (what Pepr .Watch()/.Reconcile() ride on, configured with Pepr's defaults) and through our engine.
import { readFileSync, writeFileSync } from "node:fs";
import { createServer, connect, type Server, type Socket } from "node:net";
import { K8s, kind, WatchEvent } from "kubernetes-fluent-client";
import { streamIdOf } from "../../src/event";
import type { JournalRecord } from "../../src/event";
import { KubeClient, loadKubeConfig, type JsonRequest } from "../../src/kube/client";
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
  /** Lost versions by window: [before the first fault, after fault 1, ..., after the last fault]. */
  lostByWindow: number[];
}

/** What one run of the fault script measured. */
export interface FeedComparison {
  script: string[];
  /** Highest acknowledged RV when each fault began; fault i's window ends where fault i+1 begins. */
  faultRvs: number[];
  kfc: FeedRow;
  engine: FeedRow;
  /** RV windows (lastGood, baseline list RV] that the engine's GAP records declare lost. */
  engineGaps: { from: number; to: number }[];
  /** Versions the KFC feed lost although the engine, watching the same link, lost them in no GAP. */
  kfcLostOutsideEngineGaps: number;
  /** Versions the KFC feed lost of which it later delivered a newer version: merged away by a relist. */
  kfcLostButNewerDelivered: number;
  /** Whether the KFC feed delivered the last acknowledged write within a minute of it. */
  kfcCaughtUp: boolean;
  /** How often the KFC Watcher reported each of its own events (reconnects, relists, errors). */
  kfcWatcherEvents: Record<string, number>;
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

// The writers' combined rate. Faults are placed by write count, so a fixed rate keeps the time between
// them, and the writes inside each, the same on a fast machine and a slow one.
const WRITES_PER_SECOND = 70;

/** The client with its requests spaced to `perSecond` in total, however many writers share it. */
function pacedClient(client: KubeClient, perSecond: number): KubeClient {
  let next = 0;
  const paced = Object.create(client) as KubeClient;
  paced.json = async <T>(path: string, req?: JsonRequest): Promise<T> => {
    const now = Date.now();
    const slot = Math.max(now, next);
    next = slot + 1000 / perSecond;
    if (slot > now) await new Promise(r => setTimeout(r, slot - now));
    return client.json<T>(path, req);
  };
  return paced;
}

const versionOf = (x: { ns: string; name: string; rv: string }) => `${x.ns}/${x.name}@${x.rv}`;

/** Acknowledged writes a feed never delivered. */
function lostAcks(acks: Ack[], d: Delivery[]): Ack[] {
  const seen = new Set(d.map(versionOf));
  return acks.filter(a => !seen.has(versionOf(a)));
}

const inGap = (rv: number, windows: { from: number; to: number }[]) =>
  windows.some(w => rv > w.from && rv <= w.to);

/** Lost versions of which the feed delivered a newer version of the same object afterwards. */
function lostButNewerDelivered(acks: Ack[], d: Delivery[]): number {
  const newest = new Map<string, number>();
  for (const x of d) {
    const obj = `${x.ns}/${x.name}`;
    newest.set(obj, Math.max(newest.get(obj) ?? -1, Number(x.rv)));
  }
  return lostAcks(acks, d).filter(a => (newest.get(`${a.ns}/${a.name}`) ?? -1) > Number(a.rv))
    .length;
}

/** Which window of the script an RV falls in: 0 before the first fault, i after fault i. */
function windowOf(rv: number, faultRvs: number[]): number {
  let i = 0;
  while (i < faultRvs.length && rv > faultRvs[i]) i++;
  return i;
}

function row(
  feed: string,
  acks: Ack[],
  d: Delivery[],
  faultRvs: number[],
  recs: JournalRecord[] = [],
): FeedRow {
  const windows = gapWindows(recs);
  const v = verify(acks, d, windows);
  const lostByWindow = faultRvs.map(() => 0).concat(0);
  const unmarkedFaults = new Set<number>();
  for (const a of lostAcks(acks, d)) {
    const w = windowOf(Number(a.rv), faultRvs);
    lostByWindow[w]++;
    if (w > 0 && !inGap(Number(a.rv), windows)) unmarkedFaults.add(w);
  }
  return {
    feed,
    acked: v.acked,
    delivered: v.delivered,
    lostVersions: v.lost,
    outOfOrder: v.outOfOrder,
    duplicates: v.duplicates,
    unmarkedGaps: unmarkedFaults.size,
    unmarkedLost: v.unmarkedLost,
    gapRecords: recs.filter(r => r.type === "gap").length,
    lostByWindow,
  };
}

/** Runs the fault script (partitions, a compaction inside one, a restart) through both feeds at once. */
export async function compareFeeds(srv: FaultServer, total = 2000): Promise<FeedComparison> {
  const admin = await KubeClient.create(loadKubeConfig({ kubeconfig: srv.kubeconfigs.admin }));
  const ns = `feed-${Date.now().toString(36)}`;
  await ensureNamespace(admin, ns);
  const targets = (await createConfigMaps(admin, ns, 50)).map(a => ({ ns, name: a.name }));
  const clusterId = (await clusterIdentity(admin)).clusterId;

  // Both feeds reach the server through one proxy; the writers do not, so writes go on during a cut.
  const proxy = await partitionProxy(srv.url);

  // Feed 1: the KFC Watcher, the way Pepr starts it, with admin rights so RBAC plays no part.
  const previousKubeconfig = process.env.KUBECONFIG;
  process.env.KUBECONFIG = viaProxy(srv.kubeconfigs.admin, proxy.port);
  const kfc: Delivery[] = [];
  let kfcSeq = 0;
  const kfcWatcherEvents: Record<string, number> = {};
  const watchers: { close(): void }[] = [];
  const startKfc = async (): Promise<void> => {
    const watcher = K8s(kind.ConfigMap)
      .InNamespace(ns)
      .Watch(o => {
        const m = o.metadata!;
        kfc.push({ ns: m.namespace!, name: m.name!, rv: m.resourceVersion!, seq: kfcSeq++ });
      }, peprWatchCfg);
    watchers.push(watcher);
    for (const e of Object.values(WatchEvent)) {
      if (e === WatchEvent.DATA) continue;
      watcher.events.on(e, () => void (kfcWatcherEvents[e] = (kfcWatcherEvents[e] ?? 0) + 1));
    }
    // After resyncFailureMax failed reconnects the Watcher gives up; Pepr's handler then throws,
    // which ends the watcher pod, and its replacement starts a Watcher with an empty cache. Starting
    // one at once stands in for that restart (and spares KFC the pod's start-up time).
    watcher.events.once(WatchEvent.GIVE_UP, () => void startKfc());
    await watcher.start();
  };
  await startKfc();

  // Feed 2: our engine, through the same proxy; a backoff of 1-2 s lets the compaction land before
  // it reconnects.
  const tmp = tempJournalPath("krply-feed-");
  const r = await rig(
    viaProxy(srv.kubeconfigs.recorder, proxy.port),
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
  let maxAckedRv = 0;
  const script: string[] = [];
  const faultRvs: number[] = [];
  const engineRv = () =>
    Number(r.journal.streams().find(s => s.streamId === id)?.lastResourceVersion ?? 0);
  const writing = runWriters({
    client: pacedClient(admin, WRITES_PER_SECOND),
    targets,
    writers: 2,
    total,
    retry: true,
    onAck: a => {
      acked++;
      maxAckedRv = Math.max(maxAckedRv, Number(a.rv));
    },
  });
  const at = (n: number) => until(`${n} acks`, () => acked >= n, 180_000, 10);
  const fault = async (what: string, run: () => Promise<unknown>) => {
    faultRvs.push(maxAckedRv);
    script.push(`after ${acked} writes: ${what}`);
    await run();
    // The next fault waits until the engine has resumed, so two faults never merge into one outage.
    // KFC gets the same time; writes go on meanwhile.
    const after = maxAckedRv;
    await until(`engine resumed after: ${what}`, () => engineRv() >= after, 60_000);
    // A relist may read a write not yet acknowledged; the next window starts past it.
    const resumed = engineRv();
    await until("a write past the engine's resume point", () => maxAckedRv > resumed, 60_000);
  };
  await at(total * 0.2);
  await fault("3 s network partition between the feeds and the server", () => proxy.cut(3000));
  await at(total * 0.4);
  await fault("3 s partition with an etcd compaction at its end", () =>
    proxy.cut(3000, () => srv.compact()),
  );
  await at(total * 0.6);
  await fault("API-server restart", () => srv.restart());
  await at(total * 0.8);
  await fault("1 s partition", () => proxy.cut(1000));
  const { acks } = await writing;
  const lastRv = acks.reduce((m, a) => Math.max(m, Number(a.rv)), 0);
  await until("engine caught up", () => engineRv() >= lastRv, 60_000);
  // KFC's relist after a restart is what brings it level; give it the same chance.
  const kfcCaughtUp = await until(
    "KFC caught up",
    () => kfc.some(d => Number(d.rv) >= lastRv),
    60_000,
  )
    .then(() => true)
    .catch(() => false);
  for (const w of watchers) w.close();
  if (previousKubeconfig === undefined) delete process.env.KUBECONFIG;
  else process.env.KUBECONFIG = previousKubeconfig;
  await proxy.close();
  const recs = allRecords(r.journal, id);
  await r.close();
  await admin.close();
  tmp.cleanup();
  const engineDeliveries = deliveriesOf(recs);
  const engineGaps = gapWindows(recs);
  return {
    script,
    faultRvs,
    kfc: row("Pepr .Watch/.Reconcile feed (KFC Watcher)", acks, kfc, faultRvs),
    engine: row("krply stream engine", acks, engineDeliveries, faultRvs, recs),
    kfcLostOutsideEngineGaps: lostAcks(acks, kfc).filter(a => !inGap(Number(a.rv), engineGaps))
      .length,
    engineGaps: engineGaps.map(({ from, to }) => ({ from, to })),
    kfcLostButNewerDelivered: lostButNewerDelivered(acks, kfc),
    kfcCaughtUp,
    kfcWatcherEvents,
  };
}
