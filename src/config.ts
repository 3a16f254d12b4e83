import { z } from "zod";
import { MANIFEST_COPY_ANNOTATIONS } from "./event";
import { DefaultResources } from "./kube/discovery";
import type { Selection } from "./watch/selection";
import { EngineOptionsSchema, type EngineOptions } from "./watch/types";
import { LOG_LEVELS, logLevelOf, type LogLevel } from "./log/level";

/** Environment variables as the process sees them; `process.env` in the cluster, a literal in tests. */
export type Env = Readonly<Record<string, string | undefined>>;

/** Where the watcher controller keeps the journal: the directory is the PVC mount. */
const DEFAULT_JOURNAL_PATH = "/var/lib/krply/journal.db";

// The levels and the logger's own reading of them live with the logger (src/log/level.ts).
export { LOG_LEVELS, logLevelOf, type LogLevel };
// The addon path and the CLI's cache folder are read alone, without this module (config-early.ts).
export { cliCacheDirOf, sqliteBindingOf } from "./config-early";

const LogLevelSchema = z.enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(", ")}` });

// The engine owns its tunables; the settings start from its defaults so there is one number for each.
const engineDefaults = EngineOptionsSchema.parse({});

/** A whole number in [min, max], written as a decimal string (environment values are strings). */
function wholeNumber(min: number, max = Number.MAX_SAFE_INTEGER) {
  return z
    .string()
    .trim()
    .regex(/^\d+$/, "must be a whole number")
    .transform(Number)
    .pipe(z.number().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`));
}

/** A comma-separated list; blanks between commas are ignored. */
function commaList() {
  return z.string().transform(v =>
    v
      .split(",")
      .map(s => s.trim())
      .filter(s => s !== ""),
  );
}

/** Milliseconds for a timer: Node fires a longer setTimeout or setInterval at once instead. */
const milliseconds = () => wholeNumber(1, 2 ** 31 - 1);

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

const SIZE_UNITS: Record<string, number> = {
  "": 1,
  K: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
};

/** The journal's byte budget: a size (`20Gi`, `500M`, bytes) or a share of its volume (`80%`). */
export type ByteBudget = { bytes: number } | { percent: number };

function byteBudget() {
  return z
    .string()
    .trim()
    .transform((v, ctx): ByteBudget => {
      const pct = /^(\d+(?:\.\d+)?)%$/.exec(v);
      if (pct) {
        const percent = Number(pct[1]);
        if (percent > 0 && percent <= 100) return { percent };
        ctx.addIssue({ code: "custom", message: "a percentage must be above 0 and at most 100" });
        return z.NEVER;
      }
      const size = /^(\d+(?:\.\d+)?)([KMGT]i?)?$/.exec(v);
      if (size) {
        const bytes = Math.floor(Number(size[1]) * SIZE_UNITS[size[2] ?? ""]);
        if (bytes >= 1 << 20) return { bytes };
        ctx.addIssue({ code: "custom", message: "must be at least 1Mi" });
        return z.NEVER;
      }
      ctx.addIssue({
        code: "custom",
        message: "must be a size (20Gi, 500M, bytes) or a percentage of the volume (80%)",
      });
      return z.NEVER;
    });
}

const DURATION_UNITS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000 };

/** A duration in minutes, hours or days (`90d`, `12h`, `30m`), as milliseconds. */
function duration() {
  return z
    .string()
    .trim()
    .regex(/^\d+[mhd]$/, "must be a whole number of minutes, hours or days (30m, 12h, 90d)")
    .transform(v => Number(v.slice(0, -1)) * DURATION_UNITS[v.slice(-1)])
    .pipe(z.number().min(60_000, "must be at least 1m"));
}
/** `*`, or API group names with `core` for the core group; parsed to group names ("" is core). */
const GateGroupsSchema = commaList()
  .pipe(
    z
      .array(
        z
          .string()
          .regex(/^(\*|[a-z0-9]([-a-z0-9.]*[a-z0-9])?)$/, "must be *, core or an API group name"),
      )
      .min(1, "must name at least one group, or *"),
  )
  .transform(list => (list.includes("*") ? ["*"] : list.map(g => (g === "core" ? "" : g))));

// Every setting is an environment string; each parses to its typed value here and nowhere else. The
// input side (strings, patterns, defaults, descriptions) is what docs/config.md and later the chart
// values are generated from, so defaults are given as the strings a user would write.
const fields = {
  KRPLY_JOURNAL: z
    .string()
    .prefault(DEFAULT_JOURNAL_PATH)
    .describe(
      "Path of the SQLite journal. In the cluster its directory is the journal's volume. The CLI's " +
        "`--store` defaults to this variable when it is set, and to `./krply.db` when it is not.",
    ),
  KRPLY_SQLITE_BINDING: z
    .string()
    .trim()
    .optional()
    .describe(
      "Path of better-sqlite3's native addon (`better_sqlite3.node`) every journal open loads. The " +
        "krply image sets it to the addon it builds for its Node and libc (deploy/Dockerfile), since " +
        "the bundled module cannot find the addon where npm puts it. Unset: the installed package's own.",
    ),
  KRPLY_WRITER_SCRIPT: z
    .string()
    .trim()
    .optional()
    .describe(
      "Path of the journal's writer thread script (`writer-worker.js`). The krply image sets it to " +
        "the one its CLI bundle ships, since Pepr's controller unpacks the module where the script " +
        "is not. Unset: the script beside the bundle that opens the journal.",
    ),
  KRPLY_WRITER_THREAD: z
    .enum(["auto", "on", "off"], { error: "must be auto, on or off" })
    .prefault(engineDefaults.writerThread)
    .describe(
      "Where the recorder's journal appends commit: `auto` moves them to a writer thread once it " +
        "has listed a big cluster, so the next batch is encoded while the last one commits; `on` " +
        "does so from the start; `off` keeps them on the main thread (the thread costs 40-60 MiB). " +
        "When the thread cannot start, appends stay on the main thread and `/readyz` says why.",
    ),
  KRPLY_CLI_CACHE: z
    .string()
    .trim()
    .optional()
    .describe(
      "Folder where the krply CLI keeps V8's compiled code of its bundle, so a start compiles only " +
        "chunks it has not run before; `off` keeps none. Unset: `krply` in the user's cache folder " +
        "($XDG_CACHE_HOME, else ~/.cache; ~/Library/Caches on macOS, %LOCALAPPDATA% on Windows). A " +
        "cache file that is stale, damaged or unwritable is ignored, never an error.",
    ),
  KRPLY_RESOURCES: commaList()
    .transform(list => (list.length > 0 ? list : [...DefaultResources]))
    .prefault(DefaultResources.join(","))
    .describe(
      "Resources to record, comma-separated: kubectl names (`cm`, `deployments.apps`), `*.group` " +
        "for a whole API group, or `*` for everything that can be listed and watched. A name the " +
        "server does not serve yet starts recording when a matching CustomResourceDefinition is " +
        "established.",
    ),
  KRPLY_NAMESPACES: commaList()
    .pipe(
      z.array(
        z.string().regex(DNS_LABEL, {
          error: issue => `${JSON.stringify(issue.input)} is not a namespace name (a DNS label)`,
        }),
      ),
    )
    .optional()
    .describe(
      "Namespaces to record, comma-separated; unset records every namespace. Cluster-scoped " +
        "resources are recorded either way.",
    ),
  KRPLY_SELECTOR: z
    .string()
    .trim()
    .optional()
    .describe("Label selector every stream lists and watches with (`app=web,tier!=cache`)."),
  KRPLY_BACKOFF_MIN_MS: milliseconds()
    .prefault(String(engineDefaults.backoffMinMs))
    .describe("First delay, in milliseconds, before a stream reconnects after a failure."),
  KRPLY_BACKOFF_MAX_MS: milliseconds()
    .prefault(String(engineDefaults.backoffMaxMs))
    .describe("Longest delay, in milliseconds, between reconnect attempts of one stream."),
  KRPLY_MIRROR_EVERY_MS: milliseconds()
    .prefault("30000")
    .describe(
      "How often, in milliseconds, the recorder may copy its watermarks into the Pepr Store. " +
        "The journal stays the authority; the copy only shows progress to other pods.",
    ),
  KRPLY_JOURNAL_RETRY_MS: milliseconds()
    .prefault("10000")
    .describe(
      "Delay, in milliseconds, between attempts to open the journal when it cannot be opened " +
        "(volume not mounted yet, newer schema, failed check). No stream starts until it opens.",
    ),
  KRPLY_SNAPSHOT_AT: z
    .string()
    .trim()
    .regex(/^([01]\d|2[0-3]):[0-5]\d$/, "must be HH:MM (UTC)")
    .transform(v => {
      const [hour, minute] = v.split(":").map(Number);
      return { hour, minute };
    })
    .prefault("02:00")
    .describe("Time of day (UTC, HH:MM) of the first scheduled snapshot after the watcher starts."),
  KRPLY_SNAPSHOT_EVERY_HOURS: wholeNumber(1, 24 * 31)
    .prefault("24")
    .describe("Hours between scheduled snapshots (Pepr schedules have no day unit)."),
  KRPLY_SNAPSHOT_KEEP: wholeNumber(1)
    .prefault("7")
    .describe("How many scheduled snapshots each cluster keeps; older ones are deleted."),
  KRPLY_APPROVAL_TTL_SECONDS: wholeNumber(1, 30 * 24 * 3600)
    .prefault("3600")
    .describe(
      "Seconds a ReplayPlan approval stays valid. The approval is stamped with its expiry; the " +
        "replay gate refuses the plan's writes after it, and the watcher then revokes the approval.",
    ),
  KRPLY_APPROVAL_TWO_PERSON: z
    .enum(["true", "false"], { error: "must be true or false" })
    .transform(v => v === "true")
    .prefault("false")
    .describe(
      "`true` enforces the two-person rule: the user who approves a ReplayPlan must differ from " +
        "the user who created it.",
    ),
  KRPLY_GATE_CACHE_MS: milliseconds()
    .prefault("3000")
    .describe(
      "How long, in milliseconds, the replay gate reuses a fully approved ReplayPlan it read from " +
        "the API server. A revoked approval stops admitting writes at most this long later.",
    ),
  KRPLY_FSCK_EVERY_HOURS: wholeNumber(0, 24 * 31)
    .prefault("24")
    .describe(
      "Hours between full integrity checks of the journal (every page and delta chain), run by the " +
        "recorder in small slices between its other work; 0 turns them off. Start-up checks only " +
        "the newest records. A check that finds damage stops recording (docs/operations.md).",
    ),
  KRPLY_API_HOST: z
    .string()
    .trim()
    .min(1)
    .prefault("0.0.0.0")
    .describe(
      "Address the query sidecar listens on. Without authentication (`KRPLY_API_AUTH=none`) it must " +
        "be a loopback address (127.0.0.1, ::1, localhost); the sidecar refuses to start otherwise.",
    ),
  KRPLY_API_PORT: wholeNumber(0, 65535).prefault("8484").describe("Port of the query sidecar."),
  KRPLY_API_AUTH: z
    .enum(["kubernetes", "none"], { error: "must be kubernetes or none" })
    .prefault("kubernetes")
    .describe(
      "How the sidecar checks callers: `kubernetes` (a bearer token checked with TokenReview, each " +
        "action with a SubjectAccessReview on krply.dev virtual resources) or `none` (loopback only).",
    ),
  KRPLY_API_CORS_ORIGINS: commaList()
    .prefault("")
    .describe(
      "Browser origins allowed to call the sidecar, comma-separated; empty turns CORS off.",
    ),
  KRPLY_API_WORKERS: wholeNumber(1, 16)
    .prefault("2")
    .describe(
      "Worker threads for history, events pages and the other per-object reads; snapshot, diff, search and export run on one more, low-priority thread.",
    ),
  KRPLY_API_QUERY_TIMEOUT_MS: milliseconds()
    .prefault("15000")
    .describe(
      "Longest a query may take, queue time included; past it the query is cancelled (its worker " +
        "is replaced) and the caller gets a 503.",
    ),
  KRPLY_API_ANSWER_CACHE_MIB: wholeNumber(0, 4096)
    .prefault("40")
    .describe(
      "MiB of answers the sidecar keeps as JSON for questions asked again, one budget for history " +
        "pages (each dropped as soon as its object gains a record or its streams' coverage changes) " +
        "and full pages of /v1/events (a last, partial page is never kept); 0 keeps none.",
    ),
  KRPLY_API_MAX_QUEUE: wholeNumber(1, 100_000)
    .prefault("256")
    .describe("Queries that may wait for a worker; more are refused at once with a 503."),
  KRPLY_API_MAX_BODY_BYTES: wholeNumber(256, 16 * 1024 * 1024)
    .prefault("65536")
    .describe("Largest request body the sidecar reads; larger ones get a 413."),
  KRPLY_API_SHUTDOWN_GRACE_MS: milliseconds()
    .prefault("20000")
    .describe(
      "On SIGTERM, how long in-flight requests may take to finish before their connections close.",
    ),
  KRPLY_AUDIT_LOG: z
    .string()
    .trim()
    .optional()
    .describe(
      "Path of the API server's audit log (JSON lines, `--audit-log-path`) for the watcher to follow " +
        "like `tail -F`, rotations included, and correlate with recorded changes (docs/audit.md). " +
        "Unset: no log is read; the webhook backend can still POST to the sidecar.",
    ),
  KRPLY_METRICS_PORT: z
    .string()
    .trim()
    .regex(/^(off|\d+)$/, 'must be a port number or "off"')
    .transform(v => (v === "off" ? null : Number(v)))
    .pipe(z.number().max(65535, "must be at most 65535").nullable())
    .prefault("9464")
    .describe(
      "Port of the watcher's Prometheus endpoint (`GET /metrics`) with the recorder's metrics. " +
        "Pepr's own port serves only Pepr's registry. `0` picks a free port; `off` serves none.",
    ),
  KRPLY_METRICS_HOST: z
    .string()
    .trim()
    .min(1)
    .prefault("0.0.0.0")
    .describe("Address the recorder's metrics endpoint listens on."),
  KRPLY_RETENTION_BYTES: byteBudget()
    .prefault("80%")
    .describe(
      "Byte budget of the journal (file and WAL): a size (`20Gi`, `500M`) or a share of its " +
        "volume (`80%`, measured with statfs each time the journal opens). Past 85% of it the " +
        "oldest history is pruned, a `pruned` record says so, and recording continues. A volume " +
        "that fills before the budget does (other files on it) prunes the same way.",
    ),
  KRPLY_RETENTION_MAX_AGE: duration()
    .optional()
    .describe(
      "Oldest history kept (`90d`, `12h`, `30m`); older records are pruned and a `pruned` record " +
        "says so. Unset: history is kept until the byte budget needs the room.",
    ),
  KRPLY_REDACT_KINDS: commaList()
    .optional()
    .describe(
      "Kinds redacted like Secrets, comma-separated (`SealedSecret,Credential`): every payload field " +
        "keeps its key names and each value becomes a digest. Secret is always redacted.",
    ),
  KRPLY_REDACT_CONFIGMAP_KEYS: commaList()
    .pipe(
      z.array(
        z.string().transform((v, ctx) => {
          try {
            return new RegExp(v);
          } catch {
            ctx.addIssue({
              code: "custom",
              message: `${JSON.stringify(v)} is not a regular expression`,
            });
            return z.NEVER;
          }
        }),
      ),
    )
    .optional()
    .describe(
      "ConfigMap data keys to redact: regular expressions, comma-separated (`(?i)password` is " +
        "written `[Pp]assword`; `token$,^api-key$`). A matching key keeps its name and its value " +
        "becomes a digest.",
    ),
  KRPLY_REDACT_ANNOTATIONS: commaList()
    .prefault(MANIFEST_COPY_ANNOTATIONS.join(","))
    .describe(
      "Annotations that hold a copy of the manifest, values included; they are digested on every " +
        "redacted object. The default covers kubectl's client-side apply and kapp.",
    ),
  KRPLY_REDACT_KEY_FILE: z
    .string()
    .trim()
    .optional()
    .describe(
      "File holding the key that salts redaction digests (at least 16 bytes). In the cluster, the " +
        "digest-key Secret the chart creates once, mounted as a file. Unset: `<journal>-digest.key` " +
        "beside the journal, created once. The key never sits in the journal file.",
    ),
  KRPLY_GATE_GROUPS: GateGroupsSchema.prefault("*").describe(
    "API groups whose labelled writes the replay gate's webhook receives: `*` for every group, or " +
      "a comma-separated list where `core` names the core group (`core,apps`). The chart also " +
      "narrows the webhook to objects labelled `krply.dev/plan`; under `pepr dev`, which cannot, a " +
      "list keeps the webhook off other groups' writes (such as Pepr's own CRD).",
  ),
  KRPLY_LOG_LEVEL: LogLevelSchema.optional().describe(
    `Level of krply's own logs (${LOG_LEVELS.join(", ")}). Unset: Pepr's \`LOG_LEVEL\`, else \`info\`.`,
  ),
};

/** The names of every krply setting. */
export type ConfigVariable = keyof typeof fields;

/**
 * Every `KRPLY_*` setting, as environment strings: the one place each is validated, documented and
 * defaulted. docs/config.md is generated from it (`npm run docs:config`), and it is meant to feed the
 * chart values too (`z.toJSONSchema(ConfigSchema, { io: "input" })`).
 */
export const ConfigSchema = z
  .object(fields)
  .refine(s => s.KRPLY_BACKOFF_MIN_MS <= s.KRPLY_BACKOFF_MAX_MS, {
    path: ["KRPLY_BACKOFF_MIN_MS"],
    error: issue =>
      `must not exceed KRPLY_BACKOFF_MAX_MS (${(issue.input as { KRPLY_BACKOFF_MAX_MS: number }).KRPLY_BACKOFF_MAX_MS})`,
    // Checked only when both numbers parsed, so it joins the other problems instead of hiding behind them.
    when: payload =>
      !payload.issues.some(
        i => i.path?.[0] === "KRPLY_BACKOFF_MIN_MS" || i.path?.[0] === "KRPLY_BACKOFF_MAX_MS",
      ),
  });

/** What the recorder, the scheduled snapshot, the logger and the CLI run with. */
export interface KrplyConfig {
  journalPath: string;
  /** better-sqlite3's native addon to load; undefined: the installed package's own. */
  sqliteBinding?: string;
  selection: Selection;
  /** The journal's writer thread script; undefined: the one beside the bundle. */
  writerScript?: string;
  engine: Pick<EngineOptions, "backoffMinMs" | "backoffMaxMs" | "writerThread">;
  /** How often the checkpoint mirror may write. */
  mirrorEveryMs: number;
  /** Delay between attempts to open the journal. */
  journalRetryMs: number;
  /** Hours between scheduled full checks of the journal; 0: none. */
  fsckEveryHours: number;
  snapshot: SnapshotSettings;
  replay: ReplaySettings;
  api: ApiSettings;
  /** The API server's audit log the watcher follows; null when none is. */
  auditLogPath: string | null;
  /** The recorder's /metrics endpoint; null when it is off. */
  metrics: { host: string; port: number } | null;
  retention: RetentionSettings;
  redact: RedactSettings;
  logLevel: LogLevel;
}

/** The query sidecar's settings. */
export interface ApiSettings {
  host: string;
  port: number;
  auth: "kubernetes" | "none";
  corsOrigins: string[];
  workers: number;
  queryTimeoutMs: number;
  maxQueue: number;
  /** MiB of answers kept for questions asked again (history and events pages share it); 0: none. */
  answerCacheMiB: number;
  maxBodyBytes: number;
  shutdownGraceMs: number;
}

/** How ReplayPlan approvals work and how long the replay gate trusts what it read. */
export interface ReplaySettings {
  approvalTtlMs: number;
  twoPerson: boolean;
  gateCacheMs: number;
  /** ["*"] for every group, else group names ("" is the core group). */
  gateGroups: string[];
}

/** What the journal redacts before anything reaches disk. */
export interface RedactSettings {
  kinds: string[];
  configMapKeyPatterns: RegExp[];
  annotations: string[];
  keyFile?: string;
}

/** How much history the journal keeps. */
export interface RetentionSettings {
  budget: ByteBudget;
  /** Oldest history kept, in milliseconds; undefined keeps everything the budget allows. */
  maxAgeMs?: number;
}

/** When scheduled snapshots run and how many are kept. */
export interface SnapshotSettings {
  /** Time of day (UTC) of the first run. */
  at: { hour: number; minute: number };
  everyHours: number;
  keep: number;
}

/** One invalid variable, with its value and every reason it was refused. */
export interface ConfigProblem {
  variable: string;
  value: string;
  reasons: string[];
}

/**
 * The configuration is invalid; the message names every bad variable and its value. It has no cause:
 * it reports a validation result, not a caught failure, and the problems hold everything zod said.
 */
export class ConfigError extends Error {
  constructor(readonly problems: ConfigProblem[]) {
    super(
      problems
        .map(p => `${p.variable}=${JSON.stringify(p.value)} is invalid: ${p.reasons.join(", ")}`)
        .join("; "),
    );
    this.name = "ConfigError";
  }
}

export interface LoadConfigOptions {
  /**
   * Values for variables the environment leaves unset, where a caller's default differs from the
   * cluster's: the CLI writes `./krply.db`, not the volume path.
   */
  defaults?: Partial<Record<ConfigVariable, string>>;
}

const isSet = (v: string | undefined): v is string => v !== undefined && v.trim() !== "";

// Pepr writes every key of package.json pepr.env into the manifests, so an empty value means unset.
function settingsIn(
  env: Env,
  defaults: LoadConfigOptions["defaults"] = {},
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of Object.keys(fields) as ConfigVariable[]) {
    const value = isSet(env[name]) ? env[name] : defaults[name];
    if (isSet(value)) out[name] = value;
  }
  return out;
}

function problemsOf(error: z.ZodError, input: Record<string, string | undefined>): ConfigProblem[] {
  const byVariable = new Map<string, ConfigProblem>();
  for (const issue of error.issues) {
    const variable = String(issue.path[0] ?? "(environment)");
    const problem = byVariable.get(variable) ?? {
      variable,
      value: input[variable] ?? "",
      reasons: [],
    };
    problem.reasons.push(issue.message);
    byVariable.set(variable, problem);
  }
  return [...byVariable.values()];
}

// Problems are listed in the order of the schema, whatever order the checks ran in.
const variableOrder = [...Object.keys(fields), "LOG_LEVEL"];
const order = (variable: string) => variableOrder.indexOf(variable);

// Pepr's LOG_LEVEL stands in for KRPLY_LOG_LEVEL, so it is checked by the same rule.
const PeprSchema = z.object({ LOG_LEVEL: LogLevelSchema.optional() });

/**
 * Parses every krply setting from the environment. Pure: it reads only `env`. Throws one ConfigError
 * that lists every invalid variable with its value.
 */
export function loadConfig(env: Env, options: LoadConfigOptions = {}): KrplyConfig {
  const input = settingsIn(env, options.defaults);
  const peprInput = isSet(env.LOG_LEVEL) ? { LOG_LEVEL: env.LOG_LEVEL.trim() } : {};
  const parsed = ConfigSchema.safeParse(input);
  const pepr = PeprSchema.safeParse(peprInput);
  if (!parsed.success || !pepr.success) {
    throw new ConfigError(
      [
        ...(parsed.error ? problemsOf(parsed.error, input) : []),
        ...(pepr.error ? problemsOf(pepr.error, peprInput) : []),
      ].sort((a, b) => order(a.variable) - order(b.variable)),
    );
  }
  const s = parsed.data;
  return {
    journalPath: s.KRPLY_JOURNAL,
    sqliteBinding: s.KRPLY_SQLITE_BINDING ? s.KRPLY_SQLITE_BINDING : undefined,
    selection: {
      resources: s.KRPLY_RESOURCES,
      namespaces: s.KRPLY_NAMESPACES ?? [],
      selector: s.KRPLY_SELECTOR ?? "",
    },
    writerScript: s.KRPLY_WRITER_SCRIPT ? s.KRPLY_WRITER_SCRIPT : undefined,
    engine: {
      backoffMinMs: s.KRPLY_BACKOFF_MIN_MS,
      backoffMaxMs: s.KRPLY_BACKOFF_MAX_MS,
      writerThread: s.KRPLY_WRITER_THREAD,
    },
    mirrorEveryMs: s.KRPLY_MIRROR_EVERY_MS,
    journalRetryMs: s.KRPLY_JOURNAL_RETRY_MS,
    fsckEveryHours: s.KRPLY_FSCK_EVERY_HOURS,
    snapshot: {
      at: s.KRPLY_SNAPSHOT_AT,
      everyHours: s.KRPLY_SNAPSHOT_EVERY_HOURS,
      keep: s.KRPLY_SNAPSHOT_KEEP,
    },
    replay: {
      approvalTtlMs: s.KRPLY_APPROVAL_TTL_SECONDS * 1000,
      twoPerson: s.KRPLY_APPROVAL_TWO_PERSON,
      gateCacheMs: s.KRPLY_GATE_CACHE_MS,
      gateGroups: s.KRPLY_GATE_GROUPS,
    },
    api: {
      host: s.KRPLY_API_HOST,
      port: s.KRPLY_API_PORT,
      auth: s.KRPLY_API_AUTH,
      corsOrigins: s.KRPLY_API_CORS_ORIGINS,
      workers: s.KRPLY_API_WORKERS,
      queryTimeoutMs: s.KRPLY_API_QUERY_TIMEOUT_MS,
      maxQueue: s.KRPLY_API_MAX_QUEUE,
      answerCacheMiB: s.KRPLY_API_ANSWER_CACHE_MIB,
      maxBodyBytes: s.KRPLY_API_MAX_BODY_BYTES,
      shutdownGraceMs: s.KRPLY_API_SHUTDOWN_GRACE_MS,
    },
    auditLogPath: s.KRPLY_AUDIT_LOG ? s.KRPLY_AUDIT_LOG : null,
    metrics:
      s.KRPLY_METRICS_PORT === null
        ? null
        : { host: s.KRPLY_METRICS_HOST, port: s.KRPLY_METRICS_PORT },
    retention: { budget: s.KRPLY_RETENTION_BYTES, maxAgeMs: s.KRPLY_RETENTION_MAX_AGE },
    redact: {
      kinds: s.KRPLY_REDACT_KINDS ?? [],
      configMapKeyPatterns: s.KRPLY_REDACT_CONFIGMAP_KEYS ?? [],
      annotations: s.KRPLY_REDACT_ANNOTATIONS,
      keyFile: s.KRPLY_REDACT_KEY_FILE,
    },
    logLevel: s.KRPLY_LOG_LEVEL ?? pepr.data.LOG_LEVEL ?? "info",
  };
}

/**
 * The replay gate's API groups alone, for the capability, which registers its bindings while the
 * module loads. It never throws: an invalid value means every group here (the gate stays in front of
 * every replay write), and loadConfig reports it where the configuration loads.
 */
export function gateGroupsOf(env: Env): string[] {
  const value = env.KRPLY_GATE_GROUPS;
  if (!isSet(value)) return ["*"];
  const groups = GateGroupsSchema.safeParse(value);
  return groups.success ? groups.data : ["*"];
}
