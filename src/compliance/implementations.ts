import { CONTROLS as C } from "./controls";
import { mapControl } from "./registry";
import type { ControlImplementation } from "./types";

const RBAC = "deploy/finalize/rbac.ts";
const RBAC_T = "deploy/finalize/rbac.test.ts";
const CHART_T = "test/e2e/chart-checks.ts";
const AUTH_T = "src/api/auth.test.ts";
const SERVER_T = "src/api/server.test.ts";
const API_AUTH_T = "test/integration/api-auth.test.ts";
const CLI_T = "test/integration/cli.test.ts";
const REDACT_T = "src/journal/write/redact.test.ts";
const GATE_T = "src/replay/gate.test.ts";
const APPROVAL_T = "src/replay/approval.test.ts";
const GATE_E2E = "test/e2e/replay-gate.test.ts";
const PLAN_T = "src/replay/plan.test.ts";
const REPLAY_IT = "test/integration/replay-plan.test.ts";
const TRUTH_IT = "test/integration/coverage-truth.test.ts";

/**
 * Each control mapped to the code that implements it and the tests that prove it. The compliance
 * test resolves every reference in the source tree, so a renamed function or test breaks CI here
 * instead of leaving the report quietly wrong.
 */
export const IMPLEMENTATIONS: readonly ControlImplementation[] = [
  mapControl(C.RBAC_RECORDER, {
    description: "finalize writes the recorder's ClusterRole from the recorded resources alone",
    code: [{ file: RBAC, symbol: "recorderRules" }],
    tests: [
      {
        file: RBAC_T,
        name: "grants get, list and watch on exactly the named resources, in their groups",
      },
      { file: RBAC_T, name: "refuses Secrets unless the values ask for them" },
      {
        file: CHART_T,
        name: "grants no wildcard and no Secrets, in the chart and in the manifests",
      },
    ],
  }),
  mapControl(C.RBAC_BUILD_GUARD, {
    description: "finalize stops the build on every violation it finds in the rendered rules",
    code: [{ file: RBAC, symbol: "rbacViolations" }],
    tests: [
      { file: RBAC_T, name: "finds every wildcard and unasked Secrets access" },
      {
        file: RBAC_T,
        name: "refuses wildcards and unknown built-in names with a message that says what to write",
      },
    ],
  }),
  mapControl(C.RBAC_REPLAY, {
    description: "the replay Role, bound only in the namespaces the values allow",
    code: [{ file: RBAC, symbol: "replayRules" }],
    tests: [{ file: RBAC_T, name: "lets replay create, get and patch, never Secrets or CRDs" }],
  }),
  mapControl(C.API_AUTHN, {
    description: "TokenReview, then a SubjectAccessReview per route action",
    code: [
      { file: "src/api/auth.ts", symbol: "kubernetesAuthorizer" },
      { file: "src/api/route.ts", symbol: "READ" },
    ],
    tests: [
      {
        file: AUTH_T,
        name: "answers 401 without a token or with a rejected one, 403 when the action is denied",
      },
      {
        file: SERVER_T,
        name: "asks the authorizer for each route's action and answers its refusals",
      },
      { file: API_AUTH_T, name: "the nobody token: 403 on reads" },
      {
        file: API_AUTH_T,
        name: "a token granted `journal` get reads, but cannot create snapshots",
      },
    ],
  }),
  mapControl(C.API_LOOPBACK, {
    description: "the server refuses to bind a non-loopback address without auth",
    code: [{ file: "src/api/authorizer.ts", symbol: "assertBindAllowed" }],
    tests: [
      { file: SERVER_T, name: "refuses to start without auth on an address other machines reach" },
      { file: AUTH_T, name: "allows mode none only on loopback" },
    ],
  }),
  mapControl(C.API_REVIEW_CACHE, {
    description: "a bounded TTL cache; denials live shorter than allows; failures are not cached",
    code: [{ file: "src/api/auth.ts", symbol: "TtlCache" }],
    tests: [
      {
        file: AUTH_T,
        name: "caches both reviews for their TTL and shares one review among concurrent requests",
      },
      {
        file: AUTH_T,
        name: "answers 503 when the API server cannot be asked, and caches nothing then",
      },
      { file: AUTH_T, name: "is bounded: the oldest entry goes first" },
    ],
  }),
  mapControl(C.API_INPUT, {
    description: "zod schemas per route, field errors, size and time limits, a fuzzed contract",
    code: [
      { file: "src/api/errors.ts", symbol: "invalidInput" },
      { file: "src/api/route.ts", symbol: "route" },
    ],
    tests: [
      {
        file: SERVER_T,
        name: "answers 400 with one entry per bad field, unknown parameters included",
      },
      { file: SERVER_T, name: "answers 404, 405, 413 and 415 in the same shape" },
      {
        file: "src/api/lifecycle.test.ts",
        name: "cancels a query past its limit with a 503, replaces the worker and stays up",
      },
      { file: "src/api/fuzz.test.ts", name: "never answers 5xx" },
    ],
  }),
  mapControl(C.API_CORS, {
    description: "CORS is off unless KRPLY_API_CORS_ORIGINS lists the origin",
    code: [{ file: "src/api/server.ts", symbol: "startApiServer" }],
    tests: [{ file: SERVER_T, name: "sends CORS headers only to allowed origins" }],
  }),
  mapControl(C.API_ERRORS, {
    description: "one JSON error shape in the API; one line and an exit code in the CLI",
    code: [
      { file: "src/api/errors.ts", symbol: "toApiError" },
      { file: "src/cli/errors.ts", symbol: "explain" },
    ],
    tests: [
      { file: CLI_T, name: "names the argument or flag, never a raw zod issue list (exit 2)" },
      { file: SERVER_T, name: "answers 404, 405, 413 and 415 in the same shape" },
    ],
  }),
  mapControl(C.SEC_REDACT, {
    description: "redaction to key names and salted digests before encoding and hashing",
    code: [{ file: "src/journal/write/redact.ts", symbol: "redactObject" }],
    tests: [
      { file: REDACT_T, name: "never lets a secret value reach the database or WAL bytes" },
      {
        file: "src/journal/write/row-of.test.ts",
        name: "redacts before hashing, so the stored hash cannot confirm a guessed secret",
      },
    ],
  }),
  mapControl(C.SEC_DIGEST_KEY, {
    description: "the key comes from a file (the chart's Secret) or one made beside the journal",
    code: [{ file: "src/journal/write/digest-key.ts", symbol: "loadDigestKey" }],
    tests: [
      {
        file: REDACT_T,
        name: "keeps the digest key out of the journal file: from the key file, or one made beside it",
      },
      {
        file: REDACT_T,
        name: "moves a key an older krply kept inside the journal into the key file",
      },
    ],
  }),
  mapControl(C.SEC_COPIES, {
    description:
      "manifest-copy annotations by a list; extra kinds and ConfigMap keys by configuration",
    code: [{ file: "src/event/redaction.ts", symbol: "MANIFEST_COPY_ANNOTATIONS" }],
    tests: [
      { file: REDACT_T, name: "digests every listed manifest-copy annotation, kapp's by default" },
      { file: REDACT_T, name: "redacts listed kinds and matching ConfigMap keys only" },
    ],
  }),
  mapControl(C.SEC_PARSE_ERRORS, {
    description: "watch and list parse errors name the input and its length, never its text",
    code: [{ file: "src/watch/parse.ts", symbol: "parseWatchLine" }],
    tests: [
      { file: "src/watch/parse.test.ts", name: "never carry a fragment of a garbled Secret line" },
      {
        file: "src/watch/parse.test.ts",
        name: "name the input and its length only, for answers and list pages too",
      },
    ],
  }),
  mapControl(C.SEC_AUDIT_BODIES, {
    description: "audit lines are reduced to ids and actor at parse time",
    code: [{ file: "src/audit/facts.ts", symbol: "factsOf" }],
    tests: [
      {
        file: "src/audit/facts.test.ts",
        name: "keeps ids and actor but no body, even when a Secret's line carries one",
      },
    ],
  }),
  mapControl(C.GATE_SELECTOR, {
    description:
      "finalize gives the webhook an objectSelector on the plan label, in every API group",
    code: [{ file: "deploy/finalize/webhook.ts", symbol: "validatingWebhooks" }],
    tests: [
      {
        file: "deploy/finalize/webhook.test.ts",
        name: "sees every API group, but only objects that carry the plan label",
      },
      { file: CHART_T, name: "never sends an unlabelled write to krply" },
      {
        file: "test/e2e/webhook-egress.test.ts",
        name: "denies a plan-labelled ConfigMap, and admits an unlabelled one without calling krply",
      },
      { file: GATE_T, name: "lets unlabelled writes through untouched" },
    ],
  }),
  mapControl(C.GATE_APPROVED_ONLY, {
    description:
      "the Validate binding decides from the plan it reads, and denies when it cannot read",
    code: [
      { file: "src/replay/gate.ts", symbol: "decideReplayWrite" },
      { file: "src/replay/gate.ts", symbol: "admitReplayWrite" },
    ],
    tests: [
      {
        file: GATE_T,
        name: "admits a member object of an approved plan written by the plan's field manager",
      },
      { file: GATE_T, name: "fails closed when the plan or the cluster cannot be read" },
      {
        file: GATE_E2E,
        name: "denies a labelled write of an unapproved plan and admits unlabelled writes",
      },
      {
        file: GATE_E2E,
        name: "denies writes after the approval expires, and the watcher revokes it",
      },
    ],
  }),
  mapControl(C.GATE_APPROVAL, {
    description: "the ReplayPlan webhook stamps approvals and refuses forged or late changes",
    code: [
      { file: "src/replay/approval.ts", symbol: "reviewReplayPlanChange" },
      { file: "src/replay/approval.ts", symbol: "stampReplayPlan" },
    ],
    tests: [
      {
        file: GATE_E2E,
        name: "lets only users whom RBAC allows approve, and never as someone else",
      },
      { file: APPROVAL_T, name: "refuses any change to an approved plan except revoking" },
      { file: APPROVAL_T, name: "enforces the two-person rule when configured" },
      { file: APPROVAL_T, name: "refuses approval times that krply's webhook did not stamp" },
    ],
  }),
  mapControl(C.GATE_DRY_RUN, {
    description: "server-side dry run per object; apply checks the dry run and never sets force",
    code: [
      { file: "src/replay/dry-run.ts", symbol: "dryRunPlan" },
      { file: "src/replay/apply.ts", symbol: "checkApply" },
    ],
    tests: [
      {
        file: REPLAY_IT,
        name: "gives a conflict verdict for a field another manager owns, and apply refuses",
      },
      {
        file: GATE_E2E,
        name: "publishes a plan, dry-runs it before approval, and applies it once approved",
      },
    ],
  }),
  mapControl(C.GATE_EXCLUSIONS, {
    description: "policy and sanitize are pure functions over the materialized objects",
    code: [
      { file: "src/replay/policy.ts", symbol: "exclusionReason" },
      { file: "src/replay/sanitize.ts", symbol: "sanitize" },
    ],
    tests: [
      {
        file: PLAN_T,
        name: "lists each excluded object with its reason, and says Secrets are never replayable",
      },
      { file: PLAN_T, name: "never targets the source cluster unless the plan names it" },
      { file: PLAN_T, name: "excludes an object that would carry a source UID anywhere" },
      {
        file: "src/replay/sanitize.test.ts",
        name: "removes exactly the listed server fields, owner references, finalizers and last-applied",
      },
    ],
  }),
  mapControl(C.INT_READERS, {
    description: "views open read-only (immutable when idle) and refuse a missing file",
    code: [{ file: "src/journal/journal.ts", symbol: "openJournalView" }],
    tests: [
      {
        file: "src/journal/read/view.test.ts",
        name: "is read-only: it has no append, and its connection cannot write",
      },
      {
        file: CLI_T,
        name: "a mistyped --store creates nothing, for readers and for snapshot (exit 3)",
      },
      {
        file: CLI_T,
        name: "readers leave no -wal or -shm behind, and read a journal in a read-only directory",
      },
    ],
  }),
  mapControl(C.INT_DAMAGE, {
    description: "damage is a typed error for every reader; salvage writes only a new file",
    code: [{ file: "src/journal/maintain/salvage.ts", symbol: "salvageInto" }],
    tests: [
      {
        file: CLI_T,
        name: "a damaged journal: every reader says so and points to krply fsck (exit 4)",
      },
      {
        file: "src/journal/maintain/salvage.test.ts",
        name: "never writes on top of an existing file",
      },
    ],
  }),
  mapControl(C.INT_GAPS, {
    description: "GAP, coverage and down-window records; every answer carries its coverage",
    code: [
      { file: "src/materialize/answer.ts", symbol: "coverageOf" },
      { file: "src/watch/decide.ts", symbol: "decide" },
    ],
    tests: [
      {
        file: "test/integration/recorder-faults.test.ts",
        name: "turns a 410 ERROR event into one GAP, a relist and a new BASELINE",
      },
      {
        file: TRUTH_IT,
        name: "a stream that stops says so: after the recorder stops, snapshot calls it missing and object-at stale",
      },
      {
        file: TRUTH_IT,
        name: "recorder downtime: a time inside the down window warns that changes were observed late",
      },
    ],
  }),
  mapControl(C.INT_ONE_RECORDER, {
    description: "the recorder's lease in the journal, and the Deployment's Recreate strategy",
    code: [{ file: "src/journal/write/lease.ts", symbol: "RecorderLease" }],
    tests: [
      {
        file: "test/integration/recorder-lease.test.ts",
        name: "a second krply record on the same journal exits 5 naming the first; after the first stops, it records",
      },
      {
        file: "src/journal/write/lease.test.ts",
        name: "stops a stalled recorder's appends once another took the lease over",
      },
    ],
  }),
  mapControl(C.POD_HARDENED, {
    description: "finalize sets the pod and container security contexts and the volume's fsGroup",
    code: [{ file: "deploy/finalize/objects.ts", symbol: "sidecarContainer" }],
    tests: [
      {
        file: CHART_T,
        name: "adds the journal volume, the sidecar and its Service; values size the volume",
      },
      {
        file: "deploy/finalize/objects.test.ts",
        name: "runs the sidecar non-root with a read-only root filesystem and its own probes",
      },
      {
        file: "test/e2e/image-layout.test.ts",
        name: "starts the controller, which unpacks and forks the module, as uid 65532; the recorder turns ready",
      },
    ],
  }),
];
