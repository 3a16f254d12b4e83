// Start-up benchmark: time from Recorder.start() to its first watch request on a journal of N records,
// against the same start on an empty journal (the baseline measured in this run), and what each open
// check costs on the large file.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openJournal, type OpenCheck } from "../src/journal";
import { KubeClient, loadKubeConfig } from "../src/kube/client";
import { Recorder } from "../src/watch/recorder";
import { checkpointsOf } from "../test/support/journal-fixtures";
import { cm, json, listOf, startFakeApi, type Responder } from "../test/fakeapi";
import { Workload } from "./lib-kube-workload";
import { numberFlag, stringFlag } from "./lib-flags";

const BATCH = 2000;

/** Fills a journal with n records of synthetic churn (seeded, so every run builds the same file). */
function fill(path: string, n: number): void {
  const j = openJournal(path, { sync: "NORMAL" });
  const w = new Workload(20_000);
  for (let done = 0; done < n; done += BATCH) {
    const recs = w.next(Math.min(BATCH, n - done));
    j.append({ records: recs, checkpoints: checkpointsOf(recs) });
  }
  j.checkpointWal();
  j.close();
}

const core: Responder = res =>
  json(res, 200, {
    kind: "APIResourceList",
    groupVersion: "v1",
    resources: [
      {
        name: "configmaps",
        singularName: "configmap",
        namespaced: true,
        kind: "ConfigMap",
        verbs: ["get", "list", "watch"],
      },
    ],
  });
const answers: Record<string, Responder> = {
  "/api/v1": core,
  "/apis": res => json(res, 200, { kind: "APIGroupList", groups: [] }),
  "/api/v1/configmaps": listOf(10, [cm("a", 5)]),
};
const byPath: Responder = (res, req) => (answers[req.path] ?? (r => json(r, 404, {})))(res, req);

/** Milliseconds from start() to the first watch request the server sees. */
async function timeToFirstWatch(path: string): Promise<number> {
  const fake = await startFakeApi();
  fake.onList(...Array.from({ length: 10 }, () => byPath));
  const client = await KubeClient.create(loadKubeConfig({ kubeconfig: fake.kubeconfig }));
  const recorder = new Recorder(
    {
      journalPath: path,
      selection: { resources: ["configmaps"], namespaces: [], selector: "" },
      mirrorEveryMs: 60_000,
      journalRetryMs: 0,
    },
    { client },
  );
  try {
    const started = Date.now();
    void recorder.start();
    const watch = await fake.waitForWatch(1, 120_000);
    return watch.at - started;
  } finally {
    await recorder.stop();
    await client.close();
    await fake.close();
  }
}

function timeOpen(path: string, check: OpenCheck): number {
  const t0 = performance.now();
  const j = openJournal(path, { check });
  const ms = performance.now() - t0;
  j.close();
  return ms;
}

/** Flags: --records N (default 1,000,000), --journal PATH (reuse or keep a filled file), --full (time the full check too). */
export async function main(args: string[]): Promise<void> {
  const records = numberFlag(args, "records", 1_000_000);
  const keep = stringFlag(args, "journal");
  const dir = mkdtempSync(join(tmpdir(), "krply-bench-startup-"));
  const big = keep ?? join(dir, "big.db");
  try {
    if (!existsSync(big)) {
      const t0 = performance.now();
      fill(big, records);
      console.log(`filled ${records} records in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    }
    const count = (() => {
      const j = openJournal(big, { check: "none" });
      const n = j.recordCount();
      j.close();
      return n;
    })();
    const empty = join(dir, "empty.db");
    const base = await timeToFirstWatch(empty);
    const first = await timeToFirstWatch(big);
    console.log(
      `first watch after start: empty journal ${base.toFixed(0)} ms, ${count} records ${first.toFixed(0)} ms, ` +
        `ratio ${(first / base).toFixed(2)}; target < 5000 ms`,
    );
    console.log(
      `open check on ${count} records: none ${timeOpen(big, "none").toFixed(0)} ms, quick ${timeOpen(big, "quick").toFixed(0)} ms` +
        (args.includes("--full") ? `, full ${timeOpen(big, "full").toFixed(0)} ms` : ""),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
