// The journal the web UI tests, screenshots and docs show: recorded by the real recorder from a real
// kube-apiserver (a private one: its etcd is compacted, which every user of a server would see)
// under a scripted workload with one real gap. The recorder is stopped while a ConfigMap is edited
// and another deleted, etcd is compacted, and the resumed ConfigMap watch gets 410 Gone: one GAP and
// a relist. Deployments and Services are served from the watch cache, so they resume with a down
// window and no gap. Recording takes a private server start, so a jest run records once and every
// UI test file works on its own copy.
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { streamIdOf } from "../../src/event";
import { openJournalView } from "../../src/journal";
import { KubeClient, loadKubeConfig } from "../../src/kube/client";
import { Recorder } from "../../src/watch/recorder";
import {
  startApiServer as startKubeApiServer,
  type ApiServer as KubeApiServer,
} from "../apiserver";
import { apiServerInfoEnv } from "../apiserver/shared";
import { tempJournalPath } from "./journal-fixtures";

/** The recorded namespace. */
export const UI_NS = "shop";
const RESOURCES = ["namespaces", "configmaps", "services", "deployments"];

/** What the workload did, for tests to check the UI against. */
export interface UiJournalMeta {
  clusterId: string;
  namespace: string;
  /** The ConfigMap stream, the only one with a gap. */
  gapStreamId: string;
  /** Every recorded stream id, by resource. */
  streams: Record<string, string>;
  /** Before the last pre-gap edit, inside the recorder's downtime, and after the relist. */
  times: { beforeGap: string; inGap: string; afterGap: string };
  /** Field managers of the scripted edits, as the UI attributes them. */
  managers: string[];
}

export interface UiJournal extends UiJournalMeta {
  /** A journal file of this caller's own (plans written into it stay private). */
  path: string;
  cleanup(): void;
}

type Obj = { metadata: { resourceVersion: string; name: string } };

const wait = (ms: number) => new Promise(r => setTimeout(r, ms));

async function until(what: string, probe: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`ui-journal: timed out waiting for ${what}`);
    await wait(25);
  }
}

/** A recorder with a client of its own that close() ends too, before the server may go away. */
async function recorder(
  kube: KubeApiServer,
  journalPath: string,
): Promise<{ rec: Recorder; close(): Promise<void> }> {
  const client = await KubeClient.create(loadKubeConfig({ kubeconfig: kube.kubeconfigs.recorder }));
  const rec = new Recorder(
    {
      journalPath,
      kubeconfig: kube.kubeconfigs.recorder,
      selection: { resources: RESOURCES, namespaces: [UI_NS], selector: "" },
      journal: { sync: "NORMAL" },
      // Fast reconnects: the resumed watch meets its 410 in milliseconds, not after a backoff.
      engine: { backoffMinMs: 20, backoffMaxMs: 300, slowRetryMs: 300 },
      mirrorEveryMs: 60_000,
      journalRetryMs: 0,
    },
    { client },
  );
  // The Recorder leaves a client it was given open; closing it here means no request is in flight
  // when the kube-apiserver shuts down (undici asserts on a GOAWAY with requests running).
  return { rec, close: () => rec.stop().then(() => client.close()) };
}

/** Waits until the recorder holds every resource's last write durably. */
async function durable(rec: Recorder, last: Map<string, string>): Promise<void> {
  for (const [resource, rv] of last) {
    await until(`${resource}@${rv} durable`, () =>
      rec
        .status()
        .some(
          s =>
            s.key.resource === resource && s.durableRv != null && BigInt(s.durableRv) >= BigInt(rv),
        ),
    );
  }
}

/** Runs the scripted workload against a running kube-apiserver and writes the journal at `path`. */
export async function recordUiJournal(
  kube: KubeApiServer,
  path: string,
  opts: { pace?: number } = {},
): Promise<UiJournalMeta> {
  // The pauses between steps, stretched by `pace` (the screenshots spread the history out).
  const pause = (ms: number) => wait(ms * (opts.pace ?? 1));
  const admin = await KubeClient.create(loadKubeConfig({ kubeconfig: kube.kubeconfigs.admin }));
  const last = new Map<string, string>();
  const paths: Record<string, string> = {
    configmaps: `/api/v1/namespaces/${UI_NS}/configmaps`,
    services: `/api/v1/namespaces/${UI_NS}/services`,
    deployments: `/apis/apps/v1/namespaces/${UI_NS}/deployments`,
  };
  const managers = new Set<string>();
  const write = async (
    resource: string,
    method: "POST" | "PATCH" | "DELETE",
    name: string | null,
    manager: string,
    body?: object,
  ): Promise<void> => {
    managers.add(manager);
    const o = await admin.json<Obj>(name ? `${paths[resource]}/${name}` : paths[resource], {
      method,
      body,
      query: method === "DELETE" ? undefined : { fieldManager: manager },
      contentType: method === "PATCH" ? "application/merge-patch+json" : undefined,
    });
    if (method !== "DELETE") last.set(resource, o.metadata.resourceVersion);
  };
  const deployment = (image: string, replicas: number) => ({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "web", labels: { app: "web" } },
    spec: {
      replicas,
      selector: { matchLabels: { app: "web" } },
      template: {
        metadata: { labels: { app: "web" } },
        spec: { containers: [{ name: "app", image, ports: [{ containerPort: 8080 }] }] },
      },
    },
  });
  let rec: Recorder | undefined;
  let closeRec: (() => Promise<void>) | undefined;
  try {
    await admin.json("/api/v1/namespaces", {
      method: "POST",
      body: {
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: UI_NS, labels: { team: "shop" } },
      },
    });
    await write("configmaps", "POST", null, "deployer", {
      metadata: { name: "web-config", labels: { app: "web" } },
      data: { mode: "a", workers: "2" },
    });
    await write("configmaps", "POST", null, "deployer", {
      metadata: { name: "feature-flags" },
      data: { beta: "off" },
    });
    await write("configmaps", "POST", null, "deployer", {
      metadata: { name: "old" },
      data: { x: "1" },
    });
    await write("services", "POST", null, "deployer", {
      metadata: { name: "web" },
      spec: { selector: { app: "web" }, ports: [{ name: "http", port: 80, targetPort: 8080 }] },
    });
    await write("deployments", "POST", null, "deployer", deployment("registry.local/web:1.0", 1));

    ({ rec, close: closeRec } = await recorder(kube, path));
    await rec.start();
    await durable(rec, last);
    // Pauses spread the history over a few seconds, so the time strips and screenshots show its shape.
    await pause(400);
    await write("configmaps", "PATCH", "web-config", "editor", { data: { mode: "b" } });
    await write("deployments", "PATCH", "web", "kubectl-scale", { spec: { replicas: 3 } });
    await write("configmaps", "PATCH", "feature-flags", "flagger", { data: { beta: "on" } });
    await write("deployments", "PATCH", "web", "deployer", deployment("registry.local/web:1.1", 3));
    await pause(400);
    await write("configmaps", "POST", null, "deployer", { metadata: { name: "born" }, data: {} });
    await write("configmaps", "PATCH", "web-config", "labeller", {
      metadata: { labels: { tier: "frontend" } },
    });
    await write("services", "PATCH", "web", "editor", {
      metadata: { annotations: { owner: "shop" } },
    });
    await durable(rec, last);
    await wait(20);
    // The gap starts at the stream's last record, so "before the gap" precedes one more edit.
    const beforeGap = new Date().toISOString();
    await wait(20);
    await write("configmaps", "PATCH", "web-config", "editor", { data: { workers: "4" } });
    await durable(rec, last);
    const clusterId = rec.clusterIdentity!.clusterId;
    await closeRec();
    rec = closeRec = undefined;

    // Down: these changes reach the journal only through the relist (ConfigMaps: a gap) or the
    // resumed watch (Deployments: a down window).
    await write("configmaps", "PATCH", "web-config", "editor", { data: { mode: "c" } });
    await write("configmaps", "DELETE", "old", "deployer");
    await write("deployments", "PATCH", "web", "deployer", deployment("registry.local/web:1.2", 3));
    await pause(600);
    const inGap = new Date().toISOString();
    await pause(600);
    await kube.compact();

    ({ rec, close: closeRec } = await recorder(kube, path));
    await rec.start();
    await write("configmaps", "PATCH", "web-config", "editor", { data: { mode: "d" } });
    await durable(rec, last);
    await wait(20);
    const afterGap = new Date().toISOString();
    await closeRec();
    rec = closeRec = undefined;

    const key = (resource: string, group = "", namespace = UI_NS) => ({
      clusterId,
      group,
      version: "v1",
      resource,
      namespace,
      selector: "",
    });
    const streams: Record<string, string> = {
      namespaces: streamIdOf(key("namespaces", "", "")),
      configmaps: streamIdOf(key("configmaps")),
      services: streamIdOf(key("services")),
      deployments: streamIdOf(key("deployments", "apps")),
    };
    const meta: UiJournalMeta = {
      clusterId,
      namespace: UI_NS,
      gapStreamId: streams.configmaps,
      streams,
      times: { beforeGap, inGap, afterGap },
      managers: [...managers].sort(),
    };
    checkOneGap(path, meta);
    return meta;
  } finally {
    await closeRec?.();
    await admin.close();
  }
}

/** The fixture promises exactly one gap, on the ConfigMap stream; anything else is a broken fixture. */
function checkOneGap(path: string, meta: UiJournalMeta): void {
  const view = openJournalView(path);
  try {
    const withGaps = view
      .streams()
      .filter(s => view.gaps(s.streamId).length > 0)
      .map(s => `${s.streamId} (${view.gaps(s.streamId).length})`);
    const want = `${meta.gapStreamId} (1)`;
    if (withGaps.length !== 1 || withGaps[0] !== want)
      throw new Error(
        `ui-journal: expected one gap on ${want}, the journal has: ${withGaps.join(", ") || "none"}`,
      );
  } finally {
    view.close();
  }
}

const JOURNAL_FILES = ["journal.db", "journal.db-wal", "journal.db-shm"];

/** Copies a closed journal (and any WAL left beside it) into a new temp dir. */
function copyJournal(fromDir: string, meta: UiJournalMeta): UiJournal {
  const tmp = tempJournalPath("krply-ui-");
  for (const f of JOURNAL_FILES)
    if (existsSync(join(fromDir, f))) copyFileSync(join(fromDir, f), join(tmp.dir, f));
  return { ...meta, path: tmp.path, cleanup: tmp.cleanup };
}

/** Records into `dir` with a private kube-apiserver that is disposed afterwards. */
async function recordInto(dir: string): Promise<UiJournalMeta> {
  const kube = await startKubeApiServer();
  try {
    const meta = await recordUiJournal(kube, join(dir, "journal.db"));
    writeFileSync(join(dir, "meta.json"), JSON.stringify(meta, null, 2));
    return meta;
  } finally {
    await kube.dispose();
  }
}

/**
 * The UI journal, recorded once per jest run (beside the run's shared API server) and copied for
 * each caller. Test files run one after another or in parallel workers: the first takes a lock dir and
 * records, the others wait for its meta.json. Outside jest every call records afresh.
 */
export async function uiJournal(): Promise<UiJournal> {
  const run = process.env[apiServerInfoEnv];
  if (!run) {
    const tmp = tempJournalPath("krply-ui-rec-");
    try {
      return copyJournal(tmp.dir, await recordInto(tmp.dir));
    } finally {
      tmp.cleanup();
    }
  }
  // Inside the shared server's data dir, which the run's teardown removes with the server.
  const dir = join(dirname(run), "ui-journal");
  const metaFile = join(dir, "meta.json");
  let owner = false;
  try {
    mkdirSync(dir);
    owner = true;
  } catch {
    // Another test file of this run records it.
  }
  if (owner) {
    try {
      await recordInto(dir);
    } catch (err) {
      rmSync(dir, { recursive: true, force: true });
      throw err;
    }
  } else {
    await until(
      "the UI journal another test file records",
      () => existsSync(metaFile) || !existsSync(dir),
      240_000,
    );
    if (!existsSync(metaFile)) throw new Error("ui-journal: the test file recording it failed");
  }
  const meta = JSON.parse(readFileSync(metaFile, "utf8")) as UiJournalMeta;
  return copyJournal(dir, meta);
}
