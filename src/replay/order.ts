/** What ordering looks at. */
export interface Orderable {
  group: string;
  kind: string;
  namespace: string;
  name: string;
  manifest: Record<string, unknown>;
}

const CONFIG_KINDS = new Set([
  "ServiceAccount",
  "ConfigMap",
  "Secret",
  "Service",
  "PersistentVolumeClaim",
  "PersistentVolume",
  "StorageClass",
  "Role",
  "RoleBinding",
  "ClusterRole",
  "ClusterRoleBinding",
  "LimitRange",
  "ResourceQuota",
  "NetworkPolicy",
  "PriorityClass",
  "RuntimeClass",
  "IngressClass",
]);

const WORKLOAD_KINDS = new Set([
  "Deployment",
  "StatefulSet",
  "DaemonSet",
  "ReplicaSet",
  "ReplicationController",
  "Job",
  "CronJob",
  "Pod",
]);

/** Built-in groups: core, un-dotted (apps, batch, ...) and *.k8s.io; anything else is custom. */
export function isCustomGroup(group: string): boolean {
  return group.includes(".") && !group.endsWith(".k8s.io") && group !== "k8s.io";
}

/**
 * Dependency rank: 0 namespaces; 1 CRDs; 2 custom resources; 3 what workloads refer to
 * (ServiceAccounts, ConfigMaps, Services, claims...); 4 workloads; 5 what refers to workloads or
 * Services (autoscalers, disruption budgets, ingresses) and anything else.
 */
export function rankOf(o: Pick<Orderable, "group" | "kind">): number {
  if (o.kind === "Namespace" && o.group === "") return 0;
  if (o.kind === "CustomResourceDefinition") return 1;
  if (isCustomGroup(o.group)) return 2;
  if (CONFIG_KINDS.has(o.kind)) return 3;
  if (WORKLOAD_KINDS.has(o.kind)) return 4;
  return 5;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Names of ConfigMaps, Secrets, claims and the ServiceAccount a pod spec refers to. */
function podSpecRefs(spec: Record<string, unknown>): { kind: string; name: string }[] {
  const out: { kind: string; name: string }[] = [];
  if (typeof spec.serviceAccountName === "string")
    out.push({ kind: "ServiceAccount", name: spec.serviceAccountName });
  for (const v of Array.isArray(spec.volumes) ? spec.volumes : []) {
    if (!isRecord(v)) continue;
    if (isRecord(v.configMap) && typeof v.configMap.name === "string")
      out.push({ kind: "ConfigMap", name: v.configMap.name });
    if (isRecord(v.secret) && typeof v.secret.secretName === "string")
      out.push({ kind: "Secret", name: v.secret.secretName });
    if (isRecord(v.persistentVolumeClaim) && typeof v.persistentVolumeClaim.claimName === "string")
      out.push({ kind: "PersistentVolumeClaim", name: v.persistentVolumeClaim.claimName });
  }
  const containers = [
    ...(Array.isArray(spec.containers) ? spec.containers : []),
    ...(Array.isArray(spec.initContainers) ? spec.initContainers : []),
  ];
  for (const c of containers) {
    if (!isRecord(c)) continue;
    for (const e of Array.isArray(c.envFrom) ? c.envFrom : []) {
      if (!isRecord(e)) continue;
      if (isRecord(e.configMapRef) && typeof e.configMapRef.name === "string")
        out.push({ kind: "ConfigMap", name: e.configMapRef.name });
      if (isRecord(e.secretRef) && typeof e.secretRef.name === "string")
        out.push({ kind: "Secret", name: e.secretRef.name });
    }
    for (const e of Array.isArray(c.env) ? c.env : []) {
      const from = isRecord(e) && isRecord(e.valueFrom) ? e.valueFrom : null;
      if (from && isRecord(from.configMapKeyRef) && typeof from.configMapKeyRef.name === "string")
        out.push({ kind: "ConfigMap", name: from.configMapKeyRef.name });
    }
  }
  return out;
}

function podSpecOf(manifest: Record<string, unknown>): Record<string, unknown> | null {
  const spec = isRecord(manifest.spec) ? manifest.spec : null;
  if (!spec) return null;
  if (manifest.kind === "Pod") return spec;
  if (isRecord(spec.template) && isRecord(spec.template.spec)) return spec.template.spec;
  const jt = isRecord(spec.jobTemplate) ? spec.jobTemplate : null;
  if (jt && isRecord(jt.spec) && isRecord(jt.spec.template) && isRecord(jt.spec.template.spec))
    return jt.spec.template.spec;
  return null;
}

const key = (o: Pick<Orderable, "group" | "kind" | "namespace" | "name">): string =>
  `${o.group}/${o.kind}/${o.namespace}/${o.name}`;

/**
 * The edges "a must exist before b" among a set of objects: a namespace before everything in it,
 * a CRD before resources of its kind, and what a pod template names before the workload.
 */
export function dependencies<T extends Orderable>(objects: readonly T[]): [T, T][] {
  const byKey = new Map(objects.map(o => [key(o), o]));
  const edges: [T, T][] = [];
  const crds = objects.filter(o => o.kind === "CustomResourceDefinition");
  for (const o of objects) {
    if (o.namespace) {
      const ns = byKey.get(key({ group: "", kind: "Namespace", namespace: "", name: o.namespace }));
      if (ns && ns !== o) edges.push([ns, o]);
    }
    for (const crd of crds) {
      const spec = isRecord(crd.manifest.spec) ? crd.manifest.spec : {};
      const names = isRecord(spec.names) ? spec.names : {};
      if (spec.group === o.group && names.kind === o.kind) edges.push([crd, o]);
    }
    const pod = podSpecOf(o.manifest);
    if (pod) {
      for (const ref of podSpecRefs(pod)) {
        const dep = byKey.get(
          key({ group: "", kind: ref.kind, namespace: o.namespace, name: ref.name }),
        );
        if (dep && dep !== o) edges.push([dep, o]);
      }
    }
  }
  return edges;
}

const byRank = (a: Orderable, b: Orderable): number =>
  rankOf(a) - rankOf(b) ||
  a.kind.localeCompare(b.kind) ||
  a.namespace.localeCompare(b.namespace) ||
  a.name.localeCompare(b.name);

/**
 * Sorts objects into apply order: rank first, then kind, namespace and name so plans are stable,
 * and never an object before one it depends on (a custom resource with a pod template waits for
 * the ConfigMaps it names, although custom resources rank earlier).
 */
export function orderObjects<T extends Orderable>(objects: readonly T[]): T[] {
  const sorted = [...objects].sort(byRank);
  const waitingOn = new Map<T, number>(sorted.map(o => [o, 0]));
  const after = new Map<T, T[]>();
  for (const [a, b] of dependencies(sorted)) {
    waitingOn.set(b, waitingOn.get(b)! + 1);
    after.set(a, [...(after.get(a) ?? []), b]);
  }
  const out: T[] = [];
  const done = new Set<T>();
  // Objects are few thousand at most; a linear scan for the first ready object keeps rank order.
  while (out.length < sorted.length) {
    const next =
      sorted.find(o => !done.has(o) && waitingOn.get(o) === 0) ??
      // A cycle cannot come from the edges above; if one ever does, rank order breaks it.
      sorted.find(o => !done.has(o))!;
    done.add(next);
    out.push(next);
    for (const b of after.get(next) ?? []) waitingOn.set(b, waitingOn.get(b)! - 1);
  }
  return out;
}
