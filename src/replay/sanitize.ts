/** What sanitizing may keep; both are off unless the policy allows them. */
export interface SanitizeOptions {
  allowOwnerRefs?: boolean;
  allowFinalizers?: boolean;
}

export const LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

/** Metadata the API server writes about an object's own life in the source; never part of intent. */
const SERVER_METADATA = [
  "uid",
  "resourceVersion",
  "creationTimestamp",
  "generation",
  "managedFields",
  "deletionTimestamp",
] as const;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function clone<T>(v: T): T {
  return structuredClone(v);
}

/**
 * `creationTimestamp: null` inside every pod template (Deployments, Jobs, CronJob job templates...):
 * the API server serializes it for templates that never have one. Walks only `template` objects.
 */
function dropTemplateTimestamps(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) dropTemplateTimestamps(item);
    return;
  }
  if (!isRecord(node)) return;
  for (const [k, v] of Object.entries(node)) {
    if (k === "template" && isRecord(v) && isRecord(v.metadata)) {
      if (v.metadata.creationTimestamp === null) delete v.metadata.creationTimestamp;
    }
    dropTemplateTimestamps(v);
  }
}

/**
 * A Service's addresses and node ports are allocated by the cluster that made it; another cluster
 * (or namespace) allocates its own, and asking for the old ones collides or is refused.
 */
function dropServiceAllocations(obj: Record<string, unknown>): void {
  const spec = obj.spec;
  if (!isRecord(spec)) return;
  delete spec.clusterIP;
  delete spec.clusterIPs;
  delete spec.healthCheckNodePort;
  if (Array.isArray(spec.ports)) {
    for (const p of spec.ports) if (isRecord(p)) delete p.nodePort;
  }
}

/**
 * Turns a recorded object into intent that can be applied elsewhere. It removes exactly the fields
 * the cluster wrote about the source object (identity, versions, status, allocations) and the
 * fields that tie it to other source objects unless allowed. Nothing else: an empty map or list
 * that the user wrote (`data: {}`, `emptyDir: {}`, `ports: []`) stays, because it carries meaning.
 * Pure and idempotent.
 */
export function sanitize(
  object: Record<string, unknown>,
  opts: SanitizeOptions = {},
): Record<string, unknown> {
  const out = clone(object);
  delete out.status;
  if (isRecord(out.metadata)) {
    const md = out.metadata;
    for (const k of SERVER_METADATA) delete md[k];
    if (!opts.allowOwnerRefs) delete md.ownerReferences;
    else if (Array.isArray(md.ownerReferences)) {
      // A source UID never leaves the plan: the apply resolves each owner's UID in the target.
      for (const r of md.ownerReferences) if (isRecord(r)) delete r.uid;
    }
    if (!opts.allowFinalizers) delete md.finalizers;
    if (isRecord(md.annotations) && LAST_APPLIED in md.annotations) {
      delete md.annotations[LAST_APPLIED];
      // The map held only what was stripped, so nothing the user wrote is lost with it.
      if (Object.keys(md.annotations).length === 0) delete md.annotations;
    }
  }
  const apiVersion = typeof out.apiVersion === "string" ? out.apiVersion : "";
  if (out.kind === "Service" && apiVersion === "v1") dropServiceAllocations(out);
  dropTemplateTimestamps(out);
  return out;
}
