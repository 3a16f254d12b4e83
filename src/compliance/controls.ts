import { registerControls } from "./registry";

/** Section headings of docs/threat-model.md; a test checks each exists there. */
export const THREATS = {
  rbac: "Stolen or over-broad permissions",
  api: "Someone reads the journal who should not",
  secrets: "Secret values on disk",
  gate: "The replay gate and its blast radius",
  integrity: "A journal that lies or breaks",
  pods: "A compromised pod",
} as const;

/** Every control of docs/threat-model.md. Ids are stable: reports and audits refer to them. */
export const CONTROLS = registerControls({
  RBAC_RECORDER: {
    id: "KR-RBAC-1",
    title:
      "The recorder may only get, list and watch the resources it records: no wildcard, no Secrets unless configured",
    family: "AC",
    threat: THREATS.rbac,
  },
  RBAC_BUILD_GUARD: {
    id: "KR-RBAC-2",
    title: "The build fails on any wildcard or Secrets access the values did not ask for",
    family: "CM",
    threat: THREATS.rbac,
  },
  RBAC_REPLAY: {
    id: "KR-RBAC-3",
    title: "Replay may create, get and patch only the replayable resources, never Secrets or CRDs",
    family: "AC",
    threat: THREATS.rbac,
  },
  API_AUTHN: {
    id: "KR-API-1",
    title:
      "Every journal route checks the bearer token (TokenReview) and the action (SubjectAccessReview on krply.dev)",
    family: "IA",
    threat: THREATS.api,
  },
  API_LOOPBACK: {
    id: "KR-API-2",
    title: "The query server runs without auth only on a loopback address",
    family: "AC",
    threat: THREATS.api,
  },
  API_REVIEW_CACHE: {
    id: "KR-API-3",
    title:
      "Review results are cached briefly and boundedly; an unreachable API server denies, never allows",
    family: "AC",
    threat: THREATS.api,
  },
  API_INPUT: {
    id: "KR-API-4",
    title:
      "Input is validated and bounded: unknown parameters, size, page size and query time; no 5xx on bad input",
    family: "SI",
    threat: THREATS.api,
  },
  API_CORS: {
    id: "KR-API-5",
    title: "Browsers of other origins are refused unless an origin is allowlisted",
    family: "SC",
    threat: THREATS.api,
  },
  API_ERRORS: {
    id: "KR-API-6",
    title: "No stack trace reaches a user: every error is one clear line or one JSON shape",
    family: "SI",
    threat: THREATS.api,
  },
  SEC_REDACT: {
    id: "KR-SEC-1",
    title: "Secret values never reach the journal, its WAL or its hashes in clear",
    family: "SC",
    threat: THREATS.secrets,
  },
  SEC_DIGEST_KEY: {
    id: "KR-SEC-2",
    title: "The key that salts digests never sits in the journal file",
    family: "SC",
    threat: THREATS.secrets,
  },
  SEC_COPIES: {
    id: "KR-SEC-3",
    title:
      "Copies of manifests in annotations, configured kinds and ConfigMap keys are redacted like Secrets",
    family: "SC",
    threat: THREATS.secrets,
  },
  SEC_PARSE_ERRORS: {
    id: "KR-SEC-4",
    title: "A parse error never quotes its input in a log or an answer",
    family: "SC",
    threat: THREATS.secrets,
  },
  SEC_AUDIT_BODIES: {
    id: "KR-SEC-5",
    title: "Audit events are kept without request or response bodies",
    family: "SC",
    threat: THREATS.secrets,
  },
  GATE_SELECTOR: {
    id: "KR-GATE-1",
    title:
      "Only writes labelled krply.dev/plan are sent to the webhook; no other write waits for krply",
    family: "SC",
    threat: THREATS.gate,
  },
  GATE_APPROVED_ONLY: {
    id: "KR-GATE-2",
    title:
      "A labelled write is admitted only for an approved, unexpired plan and its field manager; it fails closed",
    family: "AC",
    threat: THREATS.gate,
  },
  GATE_APPROVAL: {
    id: "KR-GATE-3",
    title:
      "Approval is decided by RBAC, stamped by krply's webhook, bound to the plan, and an approved plan cannot change",
    family: "AC",
    threat: THREATS.gate,
  },
  GATE_DRY_RUN: {
    id: "KR-GATE-4",
    title: "Every plan is dry-run first; apply never forces ownership and refuses on conflict",
    family: "CM",
    threat: THREATS.gate,
  },
  GATE_EXCLUSIONS: {
    id: "KR-GATE-5",
    title:
      "Plans leave out Secrets, RBAC and Pods by default, strip server fields and source UIDs, and never target the source cluster unless named",
    family: "CM",
    threat: THREATS.gate,
  },
  INT_READERS: {
    id: "KR-INT-1",
    title: "Readers never write: a journal is opened read-only and never created by a query",
    family: "SI",
    threat: THREATS.integrity,
  },
  INT_DAMAGE: {
    id: "KR-INT-2",
    title:
      "Damage is detected and reported, and never written over; salvage copies into a new file",
    family: "SI",
    threat: THREATS.integrity,
  },
  INT_GAPS: {
    id: "KR-INT-3",
    title: "Lost continuity is recorded, and every historical answer carries its gaps",
    family: "SI",
    threat: THREATS.integrity,
  },
  INT_ONE_RECORDER: {
    id: "KR-INT-4",
    title: "Two recorders never write one journal: a lease refuses the second one",
    family: "SI",
    threat: THREATS.integrity,
  },
  POD_HARDENED: {
    id: "KR-POD-1",
    title:
      "Pods run as non-root with a volume they own; the sidecar's root filesystem is read-only",
    family: "CM",
    threat: THREATS.pods,
  },
});
