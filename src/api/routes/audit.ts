// Audit: the webhook backend's batches in, and recorded changes grouped by who made them.
import { z } from "zod";
import { AuditEventListSchema } from "../../audit";
import { READ, route } from "../route";
import { AnswerOf, anyJson, cluster, isoTime, namespace, wholeNumber } from "../schemas";

const Counts = z.object({
  matched: z.number(),
  duplicate: z.number(),
  ignored: z.number(),
  unmatched: z.number(),
  malformed: z.number(),
  huge: z.number(),
  written: z.number(),
  pending: z.number(),
});

export const auditRoutes = [
  route({
    method: "POST",
    path: "/v1/audit/events",
    summary: "Audit events from kube-apiserver's webhook backend (an audit.k8s.io/v1 EventList)",
    description:
      "Needs auditevents create. Each item is validated; invalid items are counted and skipped. Completed " +
      "writes are correlated with recorded changes and stored as audit_correlation records (no request or " +
      "response body is kept); events whose change is not recorded yet wait and are retried with the next " +
      "batches. Point --audit-webhook-config-file at this URL (add ?cluster= when the journal holds several).",
    tag: "audit",
    action: { resource: "auditevents", verb: "create" },
    query: z.strictObject({ cluster }),
    body: AuditEventListSchema,
    response: z.object({ accepted: z.number(), malformed: z.number(), counts: Counts }),
    handle: async ({ queries, query, body }) => ({
      json: await queries.run("ingestAudit", { cluster: query.cluster, body }),
    }),
  }),
  route({
    method: "GET",
    path: "/v1/who",
    summary: "Recorded changes in a window, grouped by actor (audit user, else field manager)",
    tag: "audit",
    action: READ,
    query: z.strictObject({
      cluster,
      namespace,
      since: isoTime("since"),
      until: isoTime("until").optional(),
      limit: wholeNumber(1, 100_000, 10_000),
    }),
    response: AnswerOf(z.array(anyJson)),
    handle: async ({ queries, query }) => ({
      json: await queries.answer("who", {
        cluster: query.cluster,
        namespace: query.namespace || undefined,
        since: query.since,
        until: query.until,
        limit: query.limit,
      }),
    }),
  }),
];
