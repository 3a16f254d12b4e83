import type { PlanAdmission } from "./approval";
import type { GateRequest } from "./gate";

/**
 * The parts of a Kubernetes AdmissionRequest the replay code reads. Structural, so src/replay does not
 * load pepr (the CLI and sidecar import this folder too).
 */
export interface AdmissionLike {
  operation: string;
  kind: { group: string; kind: string };
  name?: string;
  namespace?: string;
  userInfo?: { username?: string };
  object?: unknown;
  oldObject?: unknown;
  options?: unknown;
  dryRun?: boolean;
}

interface Meta {
  name?: string;
  namespace?: string;
  labels?: Record<string, string>;
}

function metaOf(obj: unknown): Meta {
  const meta = (obj as { metadata?: Meta } | undefined)?.metadata;
  return typeof meta === "object" && meta !== null ? meta : {};
}

/**
 * The gate's view of a request. The field manager is options.fieldManager: the API server passes the
 * Create/Update options of the operation it performs, and a server-side apply that creates an object
 * arrives as CREATE with the apply's field manager in them.
 */
export function gateRequestOf(req: AdmissionLike): GateRequest {
  const meta = metaOf(req.object);
  const options = req.options as { fieldManager?: unknown } | undefined;
  return {
    operation: req.operation,
    kind: req.kind.kind,
    group: req.kind.group,
    namespace: meta.namespace ?? req.namespace ?? "",
    name: meta.name ?? req.name ?? "",
    labels: meta.labels ?? {},
    fieldManager: typeof options?.fieldManager === "string" ? options.fieldManager : undefined,
    dryRun: req.dryRun === true,
  };
}

/** The approval rules' view of a ReplayPlan request; the user is what the API server authenticated. */
export function planAdmissionOf(req: AdmissionLike): PlanAdmission {
  return {
    operation: req.operation,
    user: req.userInfo?.username ?? "",
    object: req.object,
    oldObject: req.oldObject,
  };
}
