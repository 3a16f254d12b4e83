import { z } from "zod";

/**
 * What a plan may carry. Everything risky is off by default: the flags are an allowlist, and each
 * object left out is listed with its reason.
 */
export const PolicySchema = z.object({
  includeSecrets: z.boolean().default(false),
  /** ServiceAccounts, Roles, ClusterRoles and their bindings: identities and what they may do. */
  includeRoles: z.boolean().default(false),
  includePods: z.boolean().default(false),
  includeJobs: z.boolean().default(false),
  /** PersistentVolumes, claims and storage classes. */
  includePV: z.boolean().default(false),
  includeWebhooks: z.boolean().default(false),
  includeCRDs: z.boolean().default(false),
  allowFinalizers: z.boolean().default(false),
  allowOwnerRefs: z.boolean().default(false),
  allowGaps: z.boolean().default(false),
  /** Source namespace to target namespace; a source not named maps to itself. */
  namespaceMap: z.record(z.string(), z.string()).default({}),
  /** `<Kind>/<source namespace>/<name>` (namespace empty for cluster-scoped) to a new name. */
  nameMap: z.record(z.string(), z.string()).default({}),
});
export type Policy = z.infer<typeof PolicySchema>;
export type PolicyInput = z.input<typeof PolicySchema>;

/** The default policy with some flags changed. */
export const policyOf = (input: PolicyInput = {}): Policy => PolicySchema.parse(input);

/** The minimum an exclusion rule looks at. */
export interface Candidate {
  group: string;
  kind: string;
  namespace: string;
  name: string;
  object: Record<string, unknown>;
}

export const SECRET_REASON =
  "Secret values are redacted in the journal (only key names and digests are kept), so a Secret is never replayable from it; recreate it from its source of truth";

type Rule = {
  kinds: readonly string[];
  group?: string;
  flag?: keyof Policy;
  reason: string;
};

// The flag named in a rule lets its kinds in; a rule without a flag always excludes.
const RULES: readonly Rule[] = [
  { kinds: ["Secret"], group: "", reason: SECRET_REASON },
  {
    kinds: ["ServiceAccount"],
    group: "",
    flag: "includeRoles",
    reason:
      "ServiceAccounts are identities; their tokens are issued by the target cluster (includeRoles)",
  },
  {
    kinds: ["TokenRequest", "TokenReview", "SelfSubjectReview"],
    reason: "token objects are issued per request and never replayed",
  },
  {
    kinds: ["Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"],
    group: "rbac.authorization.k8s.io",
    flag: "includeRoles",
    reason: "RBAC grants rights; replaying them widens access (includeRoles)",
  },
  {
    kinds: ["Job", "CronJob"],
    group: "batch",
    flag: "includeJobs",
    reason: "Jobs run work again when replayed (includeJobs)",
  },
  {
    kinds: ["Pod"],
    group: "",
    flag: "includePods",
    reason: "Pods are made by their controllers; replay the controller instead (includePods)",
  },
  {
    kinds: ["PersistentVolume", "PersistentVolumeClaim"],
    group: "",
    flag: "includePV",
    reason:
      "volumes bind real storage; a replayed claim may bind or provision the wrong disk (includePV)",
  },
  {
    kinds: ["StorageClass", "VolumeAttachment", "CSIDriver", "CSINode"],
    group: "storage.k8s.io",
    flag: "includePV",
    reason: "storage classes and drivers are cluster infrastructure (includePV)",
  },
  {
    kinds: [
      "ValidatingWebhookConfiguration",
      "MutatingWebhookConfiguration",
      "ValidatingAdmissionPolicy",
      "ValidatingAdmissionPolicyBinding",
      "MutatingAdmissionPolicy",
      "MutatingAdmissionPolicyBinding",
    ],
    group: "admissionregistration.k8s.io",
    flag: "includeWebhooks",
    reason: "admission webhooks and policies can block every write in the target (includeWebhooks)",
  },
  {
    kinds: ["CustomResourceDefinition"],
    group: "apiextensions.k8s.io",
    flag: "includeCRDs",
    reason: "CRDs change the target's API for everyone (includeCRDs)",
  },
  {
    kinds: ["Event", "EndpointSlice", "Endpoints", "Lease", "ControllerRevision", "Binding"],
    reason: "written by controllers and the API server, not by people; the target makes its own",
  },
];

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The controller that owns an object, when one does. */
function controllerOf(object: Record<string, unknown>): string | null {
  const md = isRecord(object.metadata) ? object.metadata : {};
  const refs = Array.isArray(md.ownerReferences) ? md.ownerReferences : [];
  const ctl = refs.find(r => isRecord(r) && r.controller === true) as
    | Record<string, unknown>
    | undefined;
  return ctl ? `${String(ctl.kind)}/${String(ctl.name)}` : null;
}

/** Why the policy leaves an object out, or null when it may be replayed. */
export function exclusionReason(c: Candidate, policy: Policy): string | null {
  for (const rule of RULES) {
    if (!rule.kinds.includes(c.kind)) continue;
    if (rule.group !== undefined && rule.group !== c.group) continue;
    if (c.kind === "Secret" && rule.group === "") return rule.reason; // includeSecrets cannot help
    if (rule.flag && policy[rule.flag] === true) return null;
    return rule.reason;
  }
  if (c.kind === "Service" && c.group === "") {
    const spec = isRecord(c.object.spec) ? c.object.spec : {};
    if (spec.type === "LoadBalancer")
      return "LoadBalancer Services allocate external load balancers and addresses in the target";
  }
  if (c.kind === "ConfigMap" && c.group === "" && c.name === "kube-root-ca.crt")
    return "published into every namespace by the target's root CA controller";
  const ctl = controllerOf(c.object);
  if (ctl && !policy.allowOwnerRefs)
    return `made by its controller ${ctl}, which makes it again in the target (allowOwnerRefs)`;
  return null;
}
