import type { KubeClient } from "../kube/client";
import { serverResources, type ApiResource } from "../kube/discovery";
import { ApiError } from "../kube/errors";
import { parseQuantity } from "./quantity";
import { getOrNull, messageOf } from "./requests";
import type { Plan, PlanObject } from "./types";

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
const rec = (v: unknown): Record<string, unknown> => (isRecord(v) ? v : {});
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const labelsOf = (o: Record<string, unknown>): Record<string, string> =>
  rec(rec(o.metadata).labels) as Record<string, string>;

/** A label selector as Kubernetes matches it (matchLabels and matchExpressions). */
export function selectorMatches(selector: unknown, labels: Record<string, string>): boolean {
  if (!isRecord(selector)) return true;
  for (const [k, v] of Object.entries(rec(selector.matchLabels))) if (labels[k] !== v) return false;
  for (const e of arr(selector.matchExpressions)) {
    const ex = rec(e);
    const key = String(ex.key);
    const values = arr(ex.values).map(String);
    const has = key in labels;
    switch (ex.operator) {
      case "In":
        if (!has || !values.includes(labels[key])) return false;
        break;
      case "NotIn":
        if (has && values.includes(labels[key])) return false;
        break;
      case "Exists":
        if (!has) return false;
        break;
      case "DoesNotExist":
        if (has) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

const anyOf = (list: unknown[], value: string): boolean =>
  list.map(String).some(x => x === "*" || x === value);

/** Whether one webhook of a configuration would be called for an apply of this object. */
export function webhookMatches(
  hook: Record<string, unknown>,
  obj: PlanObject,
  nsLabels: Record<string, string>,
): boolean {
  const ruleHit = arr(hook.rules).some(r => {
    const rule = rec(r);
    const scope = typeof rule.scope === "string" ? rule.scope : "*";
    if (scope === "Namespaced" && !obj.ref.namespace) return false;
    if (scope === "Cluster" && obj.ref.namespace) return false;
    const ops = arr(rule.operations).map(String);
    return (
      (ops.includes("*") || ops.includes("CREATE") || ops.includes("UPDATE")) &&
      anyOf(arr(rule.apiGroups), obj.ref.group) &&
      anyOf(arr(rule.apiVersions), obj.ref.version) &&
      anyOf(arr(rule.resources), obj.ref.resource)
    );
  });
  if (!ruleHit) return false;
  if (obj.ref.namespace && !selectorMatches(hook.namespaceSelector, nsLabels)) return false;
  return selectorMatches(hook.objectSelector, labelsOf(obj.manifest));
}

/** What preflight learned about the target once, shared by every object of the plan. */
export interface TargetFacts {
  namespaces: Map<string, Record<string, string> | null>;
  served: ApiResource[] | null;
  webhooks: { kind: string; config: string; hook: Record<string, unknown> }[];
  quotas: Map<string, Record<string, unknown>[]>;
  limitRanges: Map<string, Record<string, unknown>[]>;
  /** Checks that could not run (e.g. no right to list webhooks): said once per object affected. */
  unknown: string[];
}

async function listItems(client: KubeClient, path: string): Promise<Record<string, unknown>[]> {
  const list = await client.json<{ items?: unknown[] }>(path);
  return arr(list.items).map(rec);
}

const reason = (err: unknown): string =>
  err instanceof ApiError ? `${err.status} ${err.reason}` : messageOf(err);

/** Reads what preflight needs from the target: namespaces, discovery, webhooks, quotas, limits. */
export async function targetFacts(client: KubeClient, plan: Plan): Promise<TargetFacts> {
  const facts: TargetFacts = {
    namespaces: new Map(),
    served: null,
    webhooks: [],
    quotas: new Map(),
    limitRanges: new Map(),
    unknown: [],
  };
  await Promise.all([
    (async () => {
      try {
        facts.served = (await serverResources(client)).resources;
      } catch (err) {
        facts.unknown.push(`could not read the target's API discovery (${reason(err)})`);
      }
    })(),
    ...(["validating", "mutating"] as const).map(async kind => {
      const path = `/apis/admissionregistration.k8s.io/v1/${kind}webhookconfigurations`;
      try {
        for (const cfg of await listItems(client, path)) {
          const name = String(rec(cfg.metadata).name);
          for (const hook of arr(cfg.webhooks))
            facts.webhooks.push({ kind, config: name, hook: rec(hook) });
        }
      } catch (err) {
        facts.unknown.push(`could not list ${kind} admission webhooks (${reason(err)})`);
      }
    }),
    ...plan.targetNamespaces.map(async ns => {
      try {
        const live = await getOrNull(client, `/api/v1/namespaces/${encodeURIComponent(ns)}`);
        facts.namespaces.set(ns, live ? labelsOf(live) : null);
      } catch (err) {
        facts.unknown.push(`could not read namespace ${ns} (${reason(err)})`);
      }
      for (const [what, map] of [
        ["resourcequotas", facts.quotas],
        ["limitranges", facts.limitRanges],
      ] as const) {
        try {
          map.set(
            ns,
            await listItems(client, `/api/v1/namespaces/${encodeURIComponent(ns)}/${what}`),
          );
        } catch (err) {
          if (!(err instanceof ApiError && err.status === 404))
            facts.unknown.push(`could not list ${what} in ${ns} (${reason(err)})`);
        }
      }
    }),
  ]);
  return facts;
}

/** The pod spec of a workload or pod manifest, and how many pods it makes. */
function podsOf(
  m: Record<string, unknown>,
): { spec: Record<string, unknown>; count: number } | null {
  const spec = rec(m.spec);
  if (m.kind === "Pod") return { spec, count: 1 };
  const tpl = rec(spec.template);
  if (!isRecord(tpl.spec)) return null;
  const replicas = typeof spec.replicas === "number" ? spec.replicas : 1;
  return { spec: tpl.spec, count: replicas };
}

function containerTotals(
  pod: Record<string, unknown>,
  field: "requests" | "limits",
  res: string,
): number {
  return arr(pod.containers).reduce<number>(
    (sum, c) => sum + (parseQuantity(rec(rec(rec(c).resources)[field])[res]) ?? 0),
    0,
  );
}

/** Quota keys an object counts against: core object counts, count/<resource>.<group>, pod resources. */
function quotaFindings(obj: PlanObject, quota: Record<string, unknown>, pending: number): string[] {
  const name = String(rec(quota.metadata).name);
  const hard = rec(rec(quota.status).hard);
  const used = rec(rec(quota.status).used);
  const out: string[] = [];
  const countKeys = [
    obj.ref.group === "" ? obj.ref.resource : `${obj.ref.resource}.${obj.ref.group}`,
    `count/${obj.ref.group === "" ? obj.ref.resource : `${obj.ref.resource}.${obj.ref.group}`}`,
  ];
  for (const key of countKeys) {
    const h = parseQuantity(hard[key]);
    if (h === null) continue;
    const u = parseQuantity(used[key]) ?? 0;
    if (u + pending >= h)
      out.push(
        `ResourceQuota ${name} allows ${h} ${key} and ${u} are used; creating this one likely exceeds it`,
      );
  }
  const pods = podsOf(obj.manifest);
  if (pods) {
    for (const key of Object.keys(hard)) {
      const m = /^(requests|limits)\.(cpu|memory)$/.exec(key) ?? /^(cpu|memory)$/.exec(key);
      if (!m) continue;
      const [field, res] =
        m.length === 3 ? [m[1] as "requests" | "limits", m[2]] : ["requests" as const, m[1]];
      const need = containerTotals(pods.spec, field, res) * pods.count;
      const room = (parseQuantity(hard[key]) ?? Infinity) - (parseQuantity(used[key]) ?? 0);
      if (need > room)
        out.push(`ResourceQuota ${name}: ${key} needs ${need} more but ${room} is left`);
      if (need === 0 && room !== Infinity)
        out.push(
          `ResourceQuota ${name} limits ${key}; containers without ${field} are rejected unless a LimitRange sets defaults`,
        );
    }
  }
  return out;
}

function limitRangeFindings(obj: PlanObject, lr: Record<string, unknown>): string[] {
  const pods = podsOf(obj.manifest);
  if (!pods) return [];
  const name = String(rec(lr.metadata).name);
  const out: string[] = [];
  for (const limit of arr(rec(lr.spec).limits).map(rec)) {
    if (limit.type !== "Container") continue;
    for (const c of arr(pods.spec.containers).map(rec)) {
      const resources = rec(c.resources);
      for (const res of ["cpu", "memory"]) {
        const max = parseQuantity(rec(limit.max)[res]);
        const min = parseQuantity(rec(limit.min)[res]);
        const lim = parseQuantity(rec(resources.limits)[res]);
        const req = parseQuantity(rec(resources.requests)[res]);
        if (max !== null && lim !== null && lim > max)
          out.push(
            `LimitRange ${name}: container ${String(c.name)} ${res} limit ${lim} is above the maximum ${max}`,
          );
        if (min !== null && req !== null && req < min)
          out.push(
            `LimitRange ${name}: container ${String(c.name)} ${res} request ${req} is below the minimum ${min}`,
          );
      }
    }
  }
  return out;
}

/**
 * Preflight findings per object, in plan order: is the target namespace there (or in the plan), is
 * the kind served, which admission webhooks will see the write, and will a quota or LimitRange
 * likely refuse it. Findings are warnings; the dry run has the last word.
 */
export function preflight(plan: Plan, facts: TargetFacts): string[][] {
  const plannedNs = new Map(
    plan.objects
      .filter(o => o.ref.kind === "Namespace" && o.ref.group === "")
      .map(o => [o.ref.name, labelsOf(o.manifest)]),
  );
  const plannedCrds = new Set(
    plan.objects
      .filter(o => o.ref.kind === "CustomResourceDefinition")
      .map(
        o =>
          `${String(rec(o.manifest.spec).group)}/${String(rec(rec(o.manifest.spec).names).kind)}`,
      ),
  );
  const pending = new Map<string, number>();
  return plan.objects.map(obj => {
    const out: string[] = [...facts.unknown];
    const ns = obj.ref.namespace;
    let nsLabels: Record<string, string> = {};
    if (ns) {
      const live = facts.namespaces.get(ns);
      if (live) nsLabels = live;
      else if (plannedNs.has(ns)) nsLabels = plannedNs.get(ns)!;
      else if (live === null)
        out.push(`namespace ${ns} does not exist in the target and is not in the plan`);
    }
    if (facts.served) {
      const served = facts.served.some(
        r => r.group === obj.ref.group && r.version === obj.ref.version && r.kind === obj.ref.kind,
      );
      if (!served) {
        out.push(
          plannedCrds.has(`${obj.ref.group}/${obj.ref.kind}`)
            ? `${obj.ref.group}/${obj.ref.version} ${obj.ref.kind} is not served yet; its CRD is in the plan, so the dry run cannot check it`
            : `the target does not serve ${obj.ref.group || "core"}/${obj.ref.version} ${obj.ref.kind}`,
        );
      }
    }
    for (const w of facts.webhooks) {
      if (webhookMatches(w.hook, obj, nsLabels))
        out.push(
          `${w.kind} admission webhook ${w.config}/${String(w.hook.name)} will see this write`,
        );
    }
    if (ns) {
      const key = `${ns}/${obj.ref.group}/${obj.ref.resource}`;
      const n = pending.get(key) ?? 0;
      pending.set(key, n + 1);
      for (const q of facts.quotas.get(ns) ?? []) out.push(...quotaFindings(obj, q, n));
      for (const lr of facts.limitRanges.get(ns) ?? []) out.push(...limitRangeFindings(obj, lr));
    }
    return out;
  });
}
