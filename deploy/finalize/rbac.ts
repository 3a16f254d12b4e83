// kubectl's short names are the recorder's own (src/kube/discovery.ts), so the chart reads a name as it does.
import { ALIASES } from "../../src/kube/discovery";

/** One RBAC policy rule, as a ClusterRole spells it. */
export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

/**
 * API groups of the built-in resources a recorder is usually asked for. The chart grants exact
 * resources at install time, before any discovery can run, so a built-in name must map to its group
 * here; a custom resource names its group itself (`widgets.example.com`).
 */
const BUILTIN_GROUPS: Readonly<Record<string, string>> = {
  namespaces: "",
  configmaps: "",
  services: "",
  pods: "",
  serviceaccounts: "",
  persistentvolumeclaims: "",
  persistentvolumes: "",
  nodes: "",
  endpoints: "",
  limitranges: "",
  resourcequotas: "",
  replicationcontrollers: "",
  secrets: "",
  deployments: "apps",
  statefulsets: "apps",
  daemonsets: "apps",
  replicasets: "apps",
  jobs: "batch",
  cronjobs: "batch",
  ingresses: "networking.k8s.io",
  ingressclasses: "networking.k8s.io",
  networkpolicies: "networking.k8s.io",
  runtimeclasses: "node.k8s.io",
  horizontalpodautoscalers: "autoscaling",
  poddisruptionbudgets: "policy",
  storageclasses: "storage.k8s.io",
  priorityclasses: "scheduling.k8s.io",
  roles: "rbac.authorization.k8s.io",
  rolebindings: "rbac.authorization.k8s.io",
  clusterroles: "rbac.authorization.k8s.io",
  clusterrolebindings: "rbac.authorization.k8s.io",
  customresourcedefinitions: "apiextensions.k8s.io",
  validatingwebhookconfigurations: "admissionregistration.k8s.io",
  mutatingwebhookconfigurations: "admissionregistration.k8s.io",
};

const READ = ["get", "list", "watch"];

/** A resource name the chart can grant, split into plural and group. */
export function grantOf(name: string): { plural: string; group: string } {
  const raw = name.trim().toLowerCase();
  if (raw === "" || raw.includes("*")) {
    throw new Error(
      `recorder resource ${JSON.stringify(name)}: the chart grants exact resources, never wildcards; ` +
        "list each resource (for a custom resource, its plural and group: widgets.example.com)",
    );
  }
  const expanded = ALIASES[raw] ?? raw;
  const dot = expanded.indexOf(".");
  if (dot > 0) return { plural: expanded.slice(0, dot), group: expanded.slice(dot + 1) };
  const group = BUILTIN_GROUPS[expanded];
  if (group === undefined) {
    throw new Error(
      `recorder resource ${JSON.stringify(name)} is not a built-in resource the chart knows; name its ` +
        "group (plural.group), as in deployments.apps or widgets.example.com",
    );
  }
  return { plural: expanded, group };
}

function rulesFor(
  grants: readonly { plural: string; group: string }[],
  verbs: string[],
): PolicyRule[] {
  const byGroup = new Map<string, Set<string>>();
  for (const { plural, group } of grants) {
    byGroup.set(group, (byGroup.get(group) ?? new Set<string>()).add(plural));
  }
  return [...byGroup.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([group, plurals]) => ({ apiGroups: [group], resources: [...plurals].sort(), verbs }));
}

const isSecrets = (g: { plural: string; group: string }) =>
  g.plural === "secrets" && g.group === "";

/**
 * The recorder's rules: get, list and watch on exactly the configured resources, plus the CRDs it
 * follows. Secrets are refused unless the values ask for them explicitly, because the journal would
 * then hold their (redacted) history.
 */
export function recorderRules(resources: readonly string[], allowSecrets: boolean): PolicyRule[] {
  const grants = resources.map(grantOf);
  if (!allowSecrets && grants.some(isSecrets)) {
    throw new Error(
      "recorder resource secrets: recording Secrets needs krply.recorder.allowSecrets=true in the values",
    );
  }
  return rulesFor(
    [...grants, { plural: "customresourcedefinitions", group: "apiextensions.k8s.io" }],
    READ,
  );
}

/** What the watcher needs for itself: its ReplayPlan reconcile and its status writes. */
export function controllerRules(): PolicyRule[] {
  return [
    {
      apiGroups: ["krply.dev"],
      resources: ["replayplans"],
      verbs: ["get", "list", "watch", "patch"],
    },
    {
      apiGroups: ["krply.dev"],
      resources: ["replayplans/status"],
      verbs: ["get", "patch", "update"],
    },
    // Pepr's controller creates its own Store CRD at start when it is missing.
    {
      apiGroups: ["apiextensions.k8s.io"],
      resources: ["customresourcedefinitions"],
      verbs: ["create", "patch"],
    },
  ];
}

/** The sidecar authenticates callers and asks the API server about each action. */
export function sidecarRules(): PolicyRule[] {
  return [
    { apiGroups: ["authentication.k8s.io"], resources: ["tokenreviews"], verbs: ["create"] },
    { apiGroups: ["authorization.k8s.io"], resources: ["subjectaccessreviews"], verbs: ["create"] },
  ];
}

/**
 * Replay writes: create, patch and get on the replayable recorded resources (never Secrets or CRDs),
 * bound by RoleBindings only in the namespaces the values allow.
 */
export function replayRules(resources: readonly string[]): PolicyRule[] {
  const grants = resources
    .map(grantOf)
    .filter(g => !isSecrets(g) && g.plural !== "customresourcedefinitions");
  return rulesFor(grants, ["create", "get", "patch"]);
}

/** Every rule that grants a wildcard, or Secrets when they were not asked for: the build fails on any. */
export function rbacViolations(rules: readonly PolicyRule[], allowSecrets: boolean): string[] {
  const problems: string[] = [];
  for (const rule of rules) {
    const text = JSON.stringify(rule);
    if ([...rule.apiGroups, ...rule.resources, ...rule.verbs].some(v => v.includes("*"))) {
      problems.push(`wildcard in ${text}`);
    }
    if (!allowSecrets && rule.apiGroups.includes("") && rule.resources.includes("secrets")) {
      problems.push(`secrets access that the values did not ask for in ${text}`);
    }
  }
  return problems;
}
