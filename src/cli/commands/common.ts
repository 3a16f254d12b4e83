import type { Command } from "commander";
import { z } from "zod";
import { openJournal, type Journal } from "../../journal";
import { JournalReader } from "../../materialize";
import { globalOptions, type GlobalOptions } from "../program";

// kubectl short names people type; anything else is matched against the kinds in the journal.
const ALIASES: Record<string, string> = {
  cm: "configmap",
  deploy: "deployment",
  ds: "daemonset",
  sts: "statefulset",
  rs: "replicaset",
  svc: "service",
  po: "pod",
  ns: "namespace",
  sa: "serviceaccount",
  ing: "ingress",
  netpol: "networkpolicy",
  pvc: "persistentvolumeclaim",
  pv: "persistentvolume",
  crd: "customresourcedefinition",
  cj: "cronjob",
};

const RelativeSchema = z.string().regex(/^(\d+)(s|m|h|d)$/);
const UNIT_MS: Record<string, number> = { s: 1e3, m: 60e3, h: 3600e3, d: 86400e3 };

/** Parses a time flag: ISO 8601, `now`, or an age like `90s`, `15m`, `2h`, `7d` (ago). */
export function parseTimeFlag(text: string, flag: string, now = Date.now()): string {
  const t = z.string().trim().min(1, `${flag} is empty`).parse(text);
  if (t === "now") return new Date(now).toISOString();
  const rel = RelativeSchema.safeParse(t);
  if (rel.success) {
    const m = /^(\d+)(s|m|h|d)$/.exec(t)!;
    return new Date(now - Number(m[1]) * UNIT_MS[m[2]]).toISOString();
  }
  const ms = Date.parse(t);
  if (Number.isNaN(ms)) {
    throw new Error(
      `${flag} "${text}" is not a time: use ISO 8601, "now", or an age like 15m, 2h, 7d`,
    );
  }
  return new Date(ms).toISOString();
}

const RefSchema = z
  .string()
  .regex(/^[A-Za-z][\w.-]*\/[^/\s]+$/, "expected <kind>/<name>, e.g. deployment/web");

/** Splits `kind/name` (zod-checked). */
export function parseRef(text: string): { kind: string; name: string } {
  const ref = RefSchema.parse(text);
  const i = ref.indexOf("/");
  return { kind: ref.slice(0, i), name: ref.slice(i + 1) };
}

/** Opens the journal named by --store, read-only unless writing is needed. */
export function openStore(opts: GlobalOptions, writable = false): Journal {
  try {
    return openJournal(opts.store, { readonly: !writable });
  } catch (err) {
    throw new Error(`cannot open journal ${opts.store}`, { cause: err });
  }
}

/** The cluster to answer for: --cluster, or the only cluster the journal holds. */
export function resolveCluster(journal: Journal, wanted: string | undefined): string {
  const clusters = [...new Set(journal.streams().map(s => s.key.clusterId))].sort();
  if (wanted) {
    if (!clusters.includes(wanted)) {
      throw new Error(
        `cluster "${wanted}" is not in the journal (have: ${clusters.join(", ") || "none"})`,
      );
    }
    return wanted;
  }
  if (clusters.length === 1) return clusters[0];
  if (clusters.length === 0) throw new Error(`journal ${journal.path} has no recorded streams yet`);
  throw new Error(`journal holds several clusters (${clusters.join(", ")}); pass --cluster`);
}

/** Maps what a user typed (deploy, deployments, Deployment) to a kind the journal recorded. */
export function resolveKind(journal: Journal, clusterId: string, typed: string): string {
  const reader = new JournalReader(journal.path);
  try {
    const kinds = reader.kinds(clusterId);
    const lower = typed.toLowerCase();
    const want = ALIASES[lower] ?? lower;
    const hit = kinds.find(k => {
      const kl = k.toLowerCase();
      return (
        kl === want || `${kl}s` === want || `${kl}es` === want || kl.replace(/y$/, "ies") === want
      );
    });
    if (!hit) {
      throw new Error(
        `kind "${typed}" was never recorded in cluster ${clusterId} (have: ${kinds.join(", ") || "none"})`,
      );
    }
    return hit;
  } finally {
    reader.close();
  }
}

/** Global options plus the shared --cluster flag of a subcommand. */
export function optionsOf(cmd: Command): GlobalOptions & { cluster?: string } {
  return { ...globalOptions(cmd), ...(cmd.opts() as { cluster?: string }) };
}

/** Runs a body with an open journal and always closes it. */
export function withJournal<T>(opts: GlobalOptions, writable: boolean, body: (j: Journal) => T): T {
  const j = openStore(opts, writable);
  try {
    return body(j);
  } finally {
    j.close();
  }
}

/** Shortens a stream id for tables: cluster and empty parts add nothing there. */
export function shortStream(streamId: string): string {
  const parts = streamId.split("/");
  return parts.slice(1).join("/");
}
