// A write workload against a real API server and the oracle that checks a feed against its acknowledgements.
import type { JournalRecord } from "../../src/event";
import { ApiError } from "../../src/kube/errors";
import type { KubeClient } from "../../src/kube/client";

/** One write the API server acknowledged, with the RV it assigned. */
export interface Ack {
  ns: string;
  name: string;
  rv: string;
  op: "create" | "update";
  /** Wall-clock ms when the response arrived. */
  at: number;
}

/** Creates the namespace if it does not exist. */
export async function ensureNamespace(admin: KubeClient, ns: string): Promise<void> {
  try {
    await admin.json("/api/v1/namespaces", {
      method: "POST",
      body: { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } },
    });
  } catch (err) {
    if (!(err instanceof ApiError && err.status === 409)) throw err;
  }
}

type Meta = { metadata: { resourceVersion: string } };

/** Creates ConfigMaps name-0..name-(n-1) in ns, `parallel` at a time. */
export async function createConfigMaps(
  admin: KubeClient,
  ns: string,
  n: number,
  prefix = "cm",
  parallel = 8,
): Promise<Ack[]> {
  const acks: Ack[] = [];
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < n; i = next++) {
      const name = `${prefix}-${i}`;
      const o = await admin.json<Meta>(`/api/v1/namespaces/${ns}/configmaps`, {
        method: "POST",
        body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name }, data: { v: "0" } },
      });
      acks.push({ ns, name, rv: o.metadata.resourceVersion, op: "create", at: Date.now() });
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  return acks;
}

export interface WriterPlan {
  client: KubeClient;
  targets: { ns: string; name: string }[];
  writers: number;
  total: number;
  /** Retry a write that failed on the network or with 5xx (an API server restart). */
  retry?: boolean;
  onAck?: (a: Ack) => void;
}

/** Runs `writers` loops that merge-patch the targets round-robin until `total` writes are acknowledged. */
export async function runWriters(
  p: WriterPlan,
): Promise<{ acks: Ack[]; elapsedMs: number; failures: number }> {
  const acks: Ack[] = [];
  let next = 0;
  let failures = 0;
  const started = Date.now();
  const worker = async () => {
    for (let i = next++; i < p.total; i = next++) {
      const t = p.targets[i % p.targets.length];
      for (;;) {
        try {
          const o = await p.client.json<Meta>(`/api/v1/namespaces/${t.ns}/configmaps/${t.name}`, {
            method: "PATCH",
            contentType: "application/merge-patch+json",
            body: { data: { v: `w${i}` } },
          });
          const a: Ack = { ...t, rv: o.metadata.resourceVersion, op: "update", at: Date.now() };
          acks.push(a);
          p.onAck?.(a);
          break;
        } catch (err) {
          // A write whose outcome is unknown is retried as a new write; only answers count as acks.
          failures++;
          if (!p.retry) throw err;
          await new Promise(r => setTimeout(r, 100));
        }
      }
    }
  };
  await Promise.all(Array.from({ length: p.writers }, worker));
  return { acks, elapsedMs: Date.now() - started, failures };
}

/** One delivery of an object version by a feed (journal event, or a Pepr/KFC callback). */
export interface Delivery {
  ns: string;
  name: string;
  rv: string;
  /** Journal ingest order or callback order. */
  seq: number;
}

/** Live (non-baseline) deliveries from journal records. */
export function deliveriesOf(records: JournalRecord[]): Delivery[] {
  return records
    .filter(r => r.type === "event" && r.resource)
    .map((r, i) => ({
      ns: r.resource!.namespace,
      name: r.resource!.name,
      rv: r.resource!.resourceVersion,
      seq: r.ingestSeq ?? i,
    }));
}

/** RV windows (lastGood, baselineRv] per stream that a GAP record declares lost. */
export function gapWindows(
  records: JournalRecord[],
): { streamId: string; from: number; to: number }[] {
  const out: { streamId: string; from: number; to: number }[] = [];
  const open = new Map<string, number>();
  for (const r of records) {
    if (r.type === "gap") open.set(r.streamId, Number(r.gap!.lastGoodResourceVersion || 0));
    if (r.type === "baseline" && r.baseline && open.has(r.streamId)) {
      out.push({
        streamId: r.streamId,
        from: open.get(r.streamId)!,
        to: Number(r.baseline.listResourceVersion),
      });
      open.delete(r.streamId);
    }
  }
  for (const [streamId, from] of open) out.push({ streamId, from, to: Number.MAX_SAFE_INTEGER });
  return out;
}

export interface FeedVerdict {
  acked: number;
  delivered: number;
  /** Acked versions never delivered. */
  lost: number;
  /** Lost versions that no GAP window covers. */
  unmarkedLost: number;
  duplicates: number;
  /** Deliveries whose RV is lower than an earlier delivery of the same object. */
  outOfOrder: number;
}

// RVs are opaque to the product; this oracle may compare them because etcd RVs are integers.
/** Compares a feed's deliveries with the acknowledged writes. */
export function verify(
  acks: Ack[],
  deliveries: Delivery[],
  windows: { from: number; to: number }[] = [],
): FeedVerdict & { unmarkedSample: Ack[] } {
  const seen = new Map<string, number>();
  const last = new Map<string, number>();
  let duplicates = 0;
  let outOfOrder = 0;
  for (const d of [...deliveries].sort((a, b) => a.seq - b.seq)) {
    const k = `${d.ns}/${d.name}@${d.rv}`;
    const n = (seen.get(k) ?? 0) + 1;
    seen.set(k, n);
    if (n > 1) duplicates++;
    const obj = `${d.ns}/${d.name}`;
    const rv = Number(d.rv);
    if ((last.get(obj) ?? -1) > rv) outOfOrder++;
    last.set(obj, Math.max(rv, last.get(obj) ?? -1));
  }
  let lost = 0;
  const unmarked: Ack[] = [];
  for (const a of acks) {
    if (seen.has(`${a.ns}/${a.name}@${a.rv}`)) continue;
    lost++;
    const rv = Number(a.rv);
    if (!windows.some(w => rv > w.from && rv <= w.to)) unmarked.push(a);
  }
  return {
    acked: acks.length,
    delivered: deliveries.length,
    lost,
    unmarkedLost: unmarked.length,
    duplicates,
    outOfOrder,
    unmarkedSample: unmarked.slice(0, 5),
  };
}
