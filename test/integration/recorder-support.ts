// Shared helpers for the recorder suites: journal readback, polling, and engine setup with fast timings.
import type { JournalRecord, StreamKey } from "../../src/event";
import type { JournalView } from "../../src/journal";
import { openJournal } from "../../src/journal";
import { tempJournalPath } from "../support/journal-fixtures";
import { KubeClient, loadKubeConfig } from "../../src/kube/client";
import { Supervisor } from "../../src/watch/supervisor";
import type { EngineOptions } from "../../src/watch/types";

/** Every record of the journal (optionally one stream) in ingest order. */
export function allRecords(
  journal: Pick<JournalView, "events">,
  streamId?: string,
): JournalRecord[] {
  const out: JournalRecord[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = journal.events({ streamId, cursor, limit: 5000 });
    out.push(...page.records);
    if (!page.nextCursor) return out;
    cursor = page.nextCursor;
  }
}

/** Polls until the predicate holds; fails with the last value described. */
export async function until<T>(
  what: string,
  probe: () => T | undefined | false,
  timeoutMs = 30_000,
  everyMs = 25,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise(r => setTimeout(r, everyMs));
  }
}

/** Short timings so fault tests finish in seconds. */
export const fastEngine: Partial<EngineOptions> = {
  backoffMinMs: 20,
  backoffMaxMs: 300,
  slowRetryMs: 300,
  silenceMs: 60_000,
  watchTimeoutMinS: 240,
  watchTimeoutMaxS: 300,
};

export interface Rig {
  journal: ReturnType<typeof openJournal>;
  client: KubeClient;
  supervisor: Supervisor;
  path: string;
  /** Stops the supervisor, closes client and journal, removes the temp dir unless keep. */
  close(keep?: boolean): Promise<void>;
}

/** A journal in a temp dir, a client from the kubeconfig, a supervisor with the given engine options. */
export async function rig(
  kubeconfig: string,
  engine: Partial<EngineOptions> = fastEngine,
  journalPath?: string,
): Promise<Rig> {
  const tmp = journalPath ? null : tempJournalPath("krply-recorder-");
  const path = journalPath ?? tmp!.path;
  const journal = openJournal(path, { sync: "NORMAL" });
  const client = await KubeClient.create(loadKubeConfig({ kubeconfig }));
  const supervisor = new Supervisor({ client, journal, engine });
  return {
    journal,
    client,
    supervisor,
    path,
    close: async keep => {
      await supervisor.stop();
      await client.close();
      journal.close();
      if (!keep) tmp?.cleanup();
    },
  };
}

/** RVs of the object events (not baselines) of a stream, in journal order. */
export function eventRvs(records: JournalRecord[]): string[] {
  return records.filter(r => r.type === "event").map(r => r.resource!.resourceVersion);
}

/** The stream key of configmaps in all namespaces of a cluster. */
export function cmKey(clusterId: string, namespace = ""): StreamKey {
  return { clusterId, group: "", version: "v1", resource: "configmaps", namespace, selector: "" };
}
