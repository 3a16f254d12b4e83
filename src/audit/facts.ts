import { AuditEventSchema, type AuditEvent } from "./schema";

/** What krply keeps of an audit event: identities and actor, never a request or response body. */
export interface AuditFacts {
  auditId: string;
  stage: string;
  /** HTTP status; 0 for a stage written before the response. */
  code: number;
  verb: string;
  user: string;
  groups: string[];
  impersonatedUser?: string;
  userAgent?: string;
  sourceIPs: string[];
  /** stageTimestamp as written, and as epoch millis. */
  stageTimestamp: string;
  atMs: number;
  group: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
  /** From the response object's metadata (or a delete's Status details); "" when absent. */
  kind: string;
  uid: string;
  resourceVersion: string;
}

/** Why a line was not turned into facts. */
export type Rejection = "malformed" | "huge";

export type ParsedLine = { ok: true; facts: AuditFacts } | { ok: false; reason: Rejection };

type Obj = Record<string, unknown>;

function str(v: unknown): string {
  return typeof v === "string" ? v : "";
}

/** The ids a response (object, or Status of a delete) names; bodies are read here and dropped. */
function responseIds(event: AuditEvent): { kind: string; uid: string; rv: string } {
  const ro = event.responseObject;
  if (!ro || typeof ro !== "object") return { kind: "", uid: "", rv: "" };
  const o = ro as Obj;
  if (o.kind === "Status") {
    // A delete answers with a Status whose details name the deleted object's uid.
    const d = (o.details ?? {}) as Obj;
    return { kind: "", uid: str(d.uid), rv: "" };
  }
  const md = (o.metadata ?? {}) as Obj;
  return { kind: str(o.kind), uid: str(md.uid), rv: str(md.resourceVersion) };
}

/** The facts of a validated event. Secrets' bodies are never looked at beyond their metadata ids. */
export function factsOf(event: AuditEvent): AuditFacts | null {
  const atMs = Date.parse(event.stageTimestamp);
  if (Number.isNaN(atMs)) return null;
  const ref = event.objectRef ?? {};
  const ids = responseIds(event);
  const facts: AuditFacts = {
    auditId: event.auditID,
    stage: event.stage,
    code: event.responseStatus?.code ?? 0,
    verb: event.verb,
    user: event.user.username ?? "",
    groups: event.user.groups ?? [],
    sourceIPs: event.sourceIPs ?? [],
    stageTimestamp: event.stageTimestamp,
    atMs,
    group: ref.apiGroup ?? "",
    resource: ref.resource ?? "",
    subresource: ref.subresource ?? "",
    namespace: ref.namespace ?? "",
    name: ref.name ?? "",
    kind: ids.kind,
    uid: ids.uid || (ref.uid ?? ""),
    resourceVersion: ids.rv,
  };
  if (event.userAgent !== undefined) facts.userAgent = event.userAgent;
  if (event.impersonatedUser?.username) facts.impersonatedUser = event.impersonatedUser.username;
  return facts;
}

/** Validates one decoded audit event (from a log line or a webhook EventList item). */
export function parseAuditEvent(value: unknown): ParsedLine {
  const r = AuditEventSchema.safeParse(value);
  if (!r.success) return { ok: false, reason: "malformed" };
  const facts = factsOf(r.data);
  return facts ? { ok: true, facts } : { ok: false, reason: "malformed" };
}

/** Parses one JSON line of an audit log; a line over maxBytes is refused before JSON.parse. */
export function parseAuditLine(line: string, maxBytes: number): ParsedLine {
  // A UTF-16 length over the byte limit is over it in UTF-8 too (UTF-8 never uses fewer units).
  if (line.length > maxBytes) return { ok: false, reason: "huge" };
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { ok: false, reason: "malformed" };
  }
  return parseAuditEvent(value);
}
