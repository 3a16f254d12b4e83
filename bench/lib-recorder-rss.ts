// `krply record` in its own process for the recorder benchmark's RSS phases: start it on some
// namespaces, wait until every stream has its baseline, run a workload, then read VmRSS and VmHWM.
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { JournalError, openJournalView } from "../src/journal";
import type { KubeClient } from "../src/kube/client";
import { tempJournalPath } from "../test/support/journal-fixtures";
import { rng } from "./lib-kube-workload";
import { deploymentStatus } from "./lib-realistic-objects";
import type { RecordedWatch } from "./lib-saturation";

/** The small workload's two watches (phase 3 replays what they carried). */
export const SMALL_WATCHES: Omit<RecordedWatch, "lines">[] = [
  {
    path: "/api/v1/namespaces/rss-small/configmaps",
    kind: "ConfigMap",
    resource: "configmaps",
    group: "",
    version: "v1",
  },
  {
    path: "/apis/apps/v1/namespaces/rss-small/deployments",
    kind: "Deployment",
    resource: "deployments",
    group: "apps",
    version: "v1",
  },
];

function mem(pid: number): { rss: number; hwm: number } {
  const s = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(s)?.[1] ?? 0);
  return { rss: kb("VmRSS") / 1024, hwm: kb("VmHWM") / 1024 };
}

function baselined(path: string, streams: number): boolean {
  if (!existsSync(path)) return false;
  let v: ReturnType<typeof openJournalView>;
  try {
    v = openJournalView(path);
  } catch (err) {
    if (err instanceof JournalError && err.code === "READONLY") return false; // not migrated yet
    throw err;
  }
  try {
    const s = v.streams();
    return s.length === streams && s.every(x => x.baselinePresent);
  } finally {
    v.close();
  }
}

/** Runs `krply record -r <resources>` on the namespaces; RSS after `work`. */
export async function recordRss(
  runner: string,
  kubeconfig: string,
  namespaces: string[],
  resources: string[],
  work: () => Promise<unknown>,
): Promise<{ rss: number; hwm: number }> {
  const store = tempJournalPath("krply-bench-rss-");
  const args = ["record", "--kubeconfig", kubeconfig, "-r", resources.join(",")];
  for (const ns of namespaces) args.push("-n", ns);
  const child = spawn(process.execPath, [runner, ...args, "--store", store.path], {
    stdio: ["ignore", "ignore", "pipe"],
    env: { ...process.env, KRPLY_LOG_LEVEL: "warn" },
  });
  let stderr = "";
  child.stderr.on("data", d => (stderr += String(d)));
  try {
    const until = Date.now() + 300_000;
    while (!baselined(store.path, namespaces.length * resources.length)) {
      if (child.exitCode !== null || Date.now() > until)
        throw new Error(`krply record did not baseline its streams: ${stderr.slice(-500)}`);
      await new Promise(r => setTimeout(r, 250));
    }
    await work();
    await new Promise(r => setTimeout(r, 2000));
    return mem(child.pid!);
  } finally {
    child.kill("SIGINT");
    await new Promise(r => child.once("exit", r));
    store.cleanup();
  }
}

/**
 * `total` writes by `writers` writers as fast as the server takes them (seeded): half edit a
 * ConfigMap's data, half write a Deployment's status as its controller would.
 */
export async function writeSmall(
  admin: KubeClient,
  small: { configMaps: string[]; deployments: string[] },
  total: number,
  writers: number,
  seed: number,
): Promise<void> {
  let left = total;
  const loop = async (w: number) => {
    const r = rng(seed * 100 + w);
    for (let n = 0; left > 0; n++) {
      left--;
      if (r() < 0.5) {
        const name = small.configMaps[Math.floor(r() * small.configMaps.length)];
        await admin.json(`/api/v1/namespaces/rss-small/configmaps/${name}`, {
          method: "PATCH",
          contentType: "application/merge-patch+json",
          body: { data: { revision: `${w}-${n}` } },
        });
      } else {
        const name = small.deployments[Math.floor(r() * small.deployments.length)];
        await admin.json(`/apis/apps/v1/namespaces/rss-small/deployments/${name}/status`, {
          method: "PATCH",
          contentType: "application/merge-patch+json",
          body: deploymentStatus(n + 2, r),
        });
      }
    }
  };
  await Promise.all(Array.from({ length: writers }, (_, w) => loop(w)));
}
