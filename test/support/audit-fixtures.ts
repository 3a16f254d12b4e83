// Audit lines shaped like kube-apiserver's log backend writes them, for the audit tests and bench.
import type { KubeObject } from "../../src/event";

export interface AuditLineInput {
  auditId: string;
  stage?: "RequestReceived" | "ResponseStarted" | "ResponseComplete";
  verb: string;
  user: string;
  userAgent?: string;
  resource: string;
  group?: string;
  namespace: string;
  name: string;
  code?: number;
  /** The response object (a write), or a Status for a delete. */
  response?: KubeObject | { kind: "Status"; details: { uid: string } };
  request?: unknown;
  at: string;
}

/** One audit.k8s.io/v1 Event as a JSON line. */
export function auditLine(i: AuditLineInput): string {
  const stage = i.stage ?? "ResponseComplete";
  const complete = stage === "ResponseComplete";
  const ev: Record<string, unknown> = {
    kind: "Event",
    apiVersion: "audit.k8s.io/v1",
    level: "RequestResponse",
    auditID: i.auditId,
    stage,
    requestURI: `/api/v1/namespaces/${i.namespace}/${i.resource}/${i.name}`,
    verb: i.verb,
    user: { username: i.user, uid: `uid-${i.user}`, groups: ["system:authenticated"] },
    sourceIPs: ["10.0.0.7"],
    objectRef: {
      resource: i.resource,
      namespace: i.namespace,
      name: i.name,
      apiVersion: "v1",
      ...(i.group ? { apiGroup: i.group } : {}),
    },
    requestReceivedTimestamp: i.at,
    stageTimestamp: i.at,
  };
  if (i.userAgent) ev.userAgent = i.userAgent;
  if (complete) {
    ev.responseStatus = { metadata: {}, code: i.code ?? 200 };
    if (i.request !== undefined) ev.requestObject = i.request;
    if (i.response) ev.responseObject = i.response;
  }
  return JSON.stringify(ev);
}
