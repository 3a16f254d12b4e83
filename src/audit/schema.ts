import { z } from "zod";

// audit.k8s.io/v1 Event, as kube-apiserver's log and webhook backends write it. Only the fields
// krply reads are declared; zod drops the rest, so the request and response bodies never leave
// the parser (see facts.ts).

const ObjectRefSchema = z.object({
  resource: z.string().optional(),
  namespace: z.string().optional(),
  name: z.string().optional(),
  uid: z.string().optional(),
  apiGroup: z.string().optional(),
  apiVersion: z.string().optional(),
  resourceVersion: z.string().optional(),
  subresource: z.string().optional(),
});

const UserInfoSchema = z.object({
  username: z.string().optional(),
  uid: z.string().optional(),
  groups: z.array(z.string()).optional(),
});

/** One audit event; requestObject and responseObject stay unknown until facts.ts reads their ids. */
export const AuditEventSchema = z.object({
  kind: z.literal("Event").optional(),
  apiVersion: z.string().optional(),
  level: z.enum(["None", "Metadata", "Request", "RequestResponse"]),
  auditID: z.string().min(1),
  stage: z.enum(["RequestReceived", "ResponseStarted", "ResponseComplete", "Panic"]),
  requestURI: z.string(),
  verb: z.string(),
  user: UserInfoSchema,
  impersonatedUser: UserInfoSchema.optional(),
  sourceIPs: z.array(z.string()).optional(),
  userAgent: z.string().optional(),
  objectRef: ObjectRefSchema.optional(),
  responseStatus: z.object({ code: z.number().int().optional() }).optional(),
  requestObject: z.unknown().optional(),
  responseObject: z.unknown().optional(),
  requestReceivedTimestamp: z.string().optional(),
  stageTimestamp: z.string(),
});
export type AuditEvent = z.infer<typeof AuditEventSchema>;

/** The body the audit webhook backend POSTs: a batch of events. */
export const AuditEventListSchema = z.object({
  kind: z.literal("EventList").optional(),
  apiVersion: z.string().optional(),
  items: z.array(z.unknown()),
});
