import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { z } from "zod";
import pkg from "../package.json";
import {
  ConfigError,
  ConfigSchema,
  gateGroupsOf,
  loadConfig,
  logLevelOf,
  sqliteBindingOf,
  type Env,
} from "./config";
import { DefaultResources } from "./kube/discovery";

/** The message and problems loadConfig throws for this environment. */
function failure(env: Env): ConfigError {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error(`expected ${JSON.stringify(env)} to be refused`);
}

const inputSchema = () =>
  z.toJSONSchema(ConfigSchema, { io: "input" }) as {
    properties: Record<string, { description?: string; default?: string }>;
  };

describe("loadConfig", () => {
  it("gives every setting its default when the environment sets none", () => {
    expect(loadConfig({})).toEqual({
      journalPath: inputSchema().properties.KRPLY_JOURNAL.default,
      selection: { resources: [...DefaultResources], namespaces: [], selector: "" },
      engine: { backoffMinMs: 500, backoffMaxMs: 30_000, writerThread: "auto" },
      mirrorEveryMs: 30_000,
      journalRetryMs: 10_000,
      fsckEveryHours: 24,
      snapshot: { at: { hour: 2, minute: 0 }, everyHours: 24, keep: 7 },
      replay: { approvalTtlMs: 3_600_000, twoPerson: false, gateCacheMs: 3000, gateGroups: ["*"] },
      api: {
        host: "0.0.0.0",
        port: 8484,
        auth: "kubernetes",
        corsOrigins: [],
        workers: 2,
        queryTimeoutMs: 15_000,
        maxQueue: 256,
        answerCacheMiB: 40,
        maxBodyBytes: 65_536,
        shutdownGraceMs: 20_000,
      },
      auditLogPath: null,
      metrics: { host: "0.0.0.0", port: 9464 },
      retention: { budget: { percent: 80 } },
      redact: {
        kinds: [],
        configMapKeyPatterns: [],
        annotations: ["kubectl.kubernetes.io/last-applied-configuration", "kapp.k14s.io/original"],
      },
      logLevel: "info",
    });
  });

  it("reads only the environment it is given", () => {
    // The unit test setup sets KRPLY_LOG_LEVEL=silent in process.env; loadConfig must not see it.
    expect(process.env.KRPLY_LOG_LEVEL).toBe("silent");
    expect(loadConfig({}).logLevel).toBe("info");
  });

  it("parses every variable into its typed value", () => {
    const config = loadConfig({
      KRPLY_JOURNAL: "/data/j.db",
      KRPLY_RESOURCES: " cm, deployments.apps ,,*.example.com ",
      KRPLY_NAMESPACES: "a, b",
      KRPLY_SELECTOR: " app=web ",
      KRPLY_BACKOFF_MIN_MS: "100",
      KRPLY_BACKOFF_MAX_MS: "100",
      KRPLY_MIRROR_EVERY_MS: "5000",
      KRPLY_JOURNAL_RETRY_MS: "250",
      KRPLY_FSCK_EVERY_HOURS: "0",
      KRPLY_SNAPSHOT_AT: "23:59",
      KRPLY_SNAPSHOT_EVERY_HOURS: "744",
      KRPLY_SNAPSHOT_KEEP: "1",
      KRPLY_APPROVAL_TTL_SECONDS: "20",
      KRPLY_APPROVAL_TWO_PERSON: "true",
      KRPLY_GATE_CACHE_MS: "500",
      KRPLY_AUDIT_LOG: "/var/log/kubernetes/audit/audit.log",
      KRPLY_METRICS_PORT: "9100",
      KRPLY_METRICS_HOST: "127.0.0.1",
      KRPLY_GATE_GROUPS: "core, apps,example.com",
      KRPLY_LOG_LEVEL: "debug",
      KRPLY_WRITER_THREAD: "off",
    });
    expect(config).toEqual({
      journalPath: "/data/j.db",
      selection: {
        resources: ["cm", "deployments.apps", "*.example.com"],
        namespaces: ["a", "b"],
        selector: "app=web",
      },
      engine: { backoffMinMs: 100, backoffMaxMs: 100, writerThread: "off" },
      mirrorEveryMs: 5000,
      journalRetryMs: 250,
      fsckEveryHours: 0,
      snapshot: { at: { hour: 23, minute: 59 }, everyHours: 744, keep: 1 },
      replay: {
        approvalTtlMs: 20_000,
        twoPerson: true,
        gateCacheMs: 500,
        gateGroups: ["", "apps", "example.com"],
      },
      api: loadConfig({}).api,
      auditLogPath: "/var/log/kubernetes/audit/audit.log",
      metrics: { host: "127.0.0.1", port: 9100 },
      retention: loadConfig({}).retention,
      redact: loadConfig({}).redact,
      logLevel: "debug",
    });
    expect(loadConfig({ KRPLY_METRICS_PORT: "off" }).metrics).toBeNull();
  });

  it("parses the query sidecar's settings", () => {
    const { api } = loadConfig({
      KRPLY_API_HOST: "127.0.0.1",
      KRPLY_API_PORT: "0",
      KRPLY_API_AUTH: "none",
      KRPLY_API_CORS_ORIGINS: "https://a.example, https://b.example",
      KRPLY_API_WORKERS: "4",
      KRPLY_API_QUERY_TIMEOUT_MS: "500",
    });
    expect(api).toMatchObject({
      host: "127.0.0.1",
      port: 0,
      auth: "none",
      corsOrigins: ["https://a.example", "https://b.example"],
      workers: 4,
      queryTimeoutMs: 500,
    });
    expect(() => loadConfig({ KRPLY_API_AUTH: "maybe" })).toThrow(
      'KRPLY_API_AUTH="maybe" is invalid: must be kubernetes or none',
    );
  });

  it("counts empty and blank values as unset, as Pepr writes every pepr.env key", () => {
    expect(
      loadConfig({
        KRPLY_JOURNAL: "",
        KRPLY_RESOURCES: " ",
        KRPLY_NAMESPACES: "",
        KRPLY_SNAPSHOT_KEEP: "",
        KRPLY_LOG_LEVEL: "",
      }),
    ).toEqual(loadConfig({}));
    // A list with nothing but commas names no resource, so the default list applies too.
    expect(loadConfig({ KRPLY_RESOURCES: " , " }).selection.resources).toEqual([
      ...DefaultResources,
    ]);
  });

  it("takes Pepr's LOG_LEVEL when KRPLY_LOG_LEVEL is unset", () => {
    expect(loadConfig({ LOG_LEVEL: "debug" }).logLevel).toBe("debug");
    expect(loadConfig({ LOG_LEVEL: "debug", KRPLY_LOG_LEVEL: "warn" }).logLevel).toBe("warn");
  });

  it("uses a caller's defaults only for variables the environment leaves unset", () => {
    const defaults = { KRPLY_JOURNAL: "krply.db" };
    expect(loadConfig({}, { defaults }).journalPath).toBe("krply.db");
    expect(loadConfig({ KRPLY_JOURNAL: "/x.db" }, { defaults }).journalPath).toBe("/x.db");
  });

  it("names the image's SQLite addon only when KRPLY_SQLITE_BINDING is set (unset: the package's own)", () => {
    const path = "/app/lib/better_sqlite3.node";
    expect(loadConfig({ KRPLY_SQLITE_BINDING: ` ${path} ` }).sqliteBinding).toBe(path);
    expect(loadConfig({}).sqliteBinding).toBeUndefined();
    expect(loadConfig({ KRPLY_SQLITE_BINDING: "" }).sqliteBinding).toBeUndefined();
    // The CLI reads it alone, so an unrelated bad variable does not stop `krply --store`.
    expect(sqliteBindingOf({ KRPLY_SQLITE_BINDING: path, KRPLY_API_PORT: "x" })).toBe(path);
    expect(sqliteBindingOf({ KRPLY_SQLITE_BINDING: "  " })).toBeUndefined();
  });
  it("names the writer thread's script and sets where the recorder's appends commit (auto by default)", () => {
    const script = "/app/dist/cli/chunks/writer-worker.js";
    const config = loadConfig({ KRPLY_WRITER_SCRIPT: ` ${script} `, KRPLY_WRITER_THREAD: "on" });
    expect(config.writerScript).toBe(script);
    expect(config.engine.writerThread).toBe("on");
    expect(loadConfig({}).engine.writerThread).toBe("auto");
    expect(loadConfig({}).writerScript).toBeUndefined();
    expect(loadConfig({ KRPLY_WRITER_THREAD: "off" }).engine.writerThread).toBe("off");
  });
});

describe("loadConfig errors name the variable and its value", () => {
  it.each([
    [
      "a writer thread mode that is not auto, on or off",
      { KRPLY_WRITER_THREAD: "yes" },
      'KRPLY_WRITER_THREAD="yes" is invalid: must be auto, on or off',
    ],
    [
      "a wrong format",
      { KRPLY_SNAPSHOT_AT: "25:00" },
      'KRPLY_SNAPSHOT_AT="25:00" is invalid: must be HH:MM (UTC)',
    ],
    [
      "not a number",
      { KRPLY_MIRROR_EVERY_MS: "soon" },
      'KRPLY_MIRROR_EVERY_MS="soon" is invalid: must be a whole number',
    ],
    [
      "a fraction",
      { KRPLY_JOURNAL_RETRY_MS: "1.5" },
      'KRPLY_JOURNAL_RETRY_MS="1.5" is invalid: must be a whole number',
    ],
    [
      "below the minimum",
      { KRPLY_SNAPSHOT_KEEP: "0" },
      'KRPLY_SNAPSHOT_KEEP="0" is invalid: must be at least 1',
    ],
    [
      "above the maximum",
      { KRPLY_SNAPSHOT_EVERY_HOURS: "745" },
      'KRPLY_SNAPSHOT_EVERY_HOURS="745" is invalid: must be at most 744',
    ],
    [
      "a delay longer than a timer can wait",
      { KRPLY_JOURNAL_RETRY_MS: "3000000000" },
      'KRPLY_JOURNAL_RETRY_MS="3000000000" is invalid: must be at most 2147483647',
    ],
    [
      "bad list items, each named",
      { KRPLY_NAMESPACES: "a,Bad_NS,-x" },
      'KRPLY_NAMESPACES="a,Bad_NS,-x" is invalid: "Bad_NS" is not a namespace name (a DNS label), "-x" is not a namespace name (a DNS label)',
    ],
    [
      "a value outside the allowed names",
      { KRPLY_LOG_LEVEL: "loud" },
      'KRPLY_LOG_LEVEL="loud" is invalid: must be one of fatal, error, warn, info, debug, trace, silent',
    ],
    [
      "Pepr's LOG_LEVEL, which stands in for KRPLY_LOG_LEVEL",
      { LOG_LEVEL: "verbose" },
      'LOG_LEVEL="verbose" is invalid: must be one of fatal, error, warn, info, debug, trace, silent',
    ],
    [
      "two settings that contradict each other",
      { KRPLY_BACKOFF_MIN_MS: "60000", KRPLY_BACKOFF_MAX_MS: "1000" },
      'KRPLY_BACKOFF_MIN_MS="60000" is invalid: must not exceed KRPLY_BACKOFF_MAX_MS (1000)',
    ],
    [
      "a contradiction with a default",
      { KRPLY_BACKOFF_MIN_MS: "60000" },
      'KRPLY_BACKOFF_MIN_MS="60000" is invalid: must not exceed KRPLY_BACKOFF_MAX_MS (30000)',
    ],
  ])("refuses %s", (_shape, env: Env, message) => {
    const err = failure(env);
    expect(err.message).toBe(message);
    expect(err.problems).toHaveLength(1);
  });

  it("lists every bad variable at once, in the schema's order, with its value", () => {
    const err = failure({
      LOG_LEVEL: "loud",
      KRPLY_SNAPSHOT_KEEP: "0",
      KRPLY_SNAPSHOT_AT: "25:00",
      KRPLY_BACKOFF_MIN_MS: "60000",
      KRPLY_NAMESPACES: "Bad_NS",
      KRPLY_JOURNAL: "/fine.db",
    });
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.problems.map(p => [p.variable, p.value])).toEqual([
      ["KRPLY_NAMESPACES", "Bad_NS"],
      ["KRPLY_BACKOFF_MIN_MS", "60000"],
      ["KRPLY_SNAPSHOT_AT", "25:00"],
      ["KRPLY_SNAPSHOT_KEEP", "0"],
      ["LOG_LEVEL", "loud"],
    ]);
    expect(err.message.split("; ")).toEqual([
      'KRPLY_NAMESPACES="Bad_NS" is invalid: "Bad_NS" is not a namespace name (a DNS label)',
      'KRPLY_BACKOFF_MIN_MS="60000" is invalid: must not exceed KRPLY_BACKOFF_MAX_MS (30000)',
      'KRPLY_SNAPSHOT_AT="25:00" is invalid: must be HH:MM (UTC)',
      'KRPLY_SNAPSHOT_KEEP="0" is invalid: must be at least 1',
      'LOG_LEVEL="loud" is invalid: must be one of fatal, error, warn, info, debug, trace, silent',
    ]);
  });
});

describe("retention and redaction settings", () => {
  it("read a size or a share of the volume, an age, kinds, key patterns, annotations, a key file", () => {
    const c = loadConfig({
      KRPLY_RETENTION_BYTES: "20Gi",
      KRPLY_RETENTION_MAX_AGE: "90d",
      KRPLY_REDACT_KINDS: "SealedSecret, Credential",
      KRPLY_REDACT_CONFIGMAP_KEYS: "[Pp]assword,token$",
      KRPLY_REDACT_ANNOTATIONS: "example.com/original",
      KRPLY_REDACT_KEY_FILE: "/etc/krply/digest-key/key",
    });
    expect(c.retention).toEqual({ budget: { bytes: 20 * 2 ** 30 }, maxAgeMs: 90 * 86_400_000 });
    expect(c.redact).toEqual({
      kinds: ["SealedSecret", "Credential"],
      configMapKeyPatterns: [/[Pp]assword/, /token$/],
      annotations: ["example.com/original"],
      keyFile: "/etc/krply/digest-key/key",
    });
    expect(loadConfig({ KRPLY_RETENTION_BYTES: "500M" }).retention.budget).toEqual({
      bytes: 500e6,
    });
    expect(loadConfig({ KRPLY_RETENTION_BYTES: "12.5%" }).retention.budget).toEqual({
      percent: 12.5,
    });
  });

  it("refuse what they cannot use, naming the variable", () => {
    for (const [variable, value] of [
      ["KRPLY_RETENTION_BYTES", "lots"],
      ["KRPLY_RETENTION_BYTES", "0%"],
      ["KRPLY_RETENTION_BYTES", "150%"],
      ["KRPLY_RETENTION_BYTES", "1000"],
      ["KRPLY_RETENTION_MAX_AGE", "3 weeks"],
      ["KRPLY_REDACT_CONFIGMAP_KEYS", "pass(word"],
    ]) {
      expect(failure({ [variable]: value }).problems.map(p => p.variable)).toEqual([variable]);
    }
  });
});

describe("gateGroupsOf", () => {
  it("reads the gate's groups without throwing, and means every group when unset or invalid", () => {
    expect(gateGroupsOf({})).toEqual(["*"]);
    expect(gateGroupsOf({ KRPLY_GATE_GROUPS: "core,apps" })).toEqual(["", "apps"]);
    expect(gateGroupsOf({ KRPLY_GATE_GROUPS: "apps,*" })).toEqual(["*"]);
    expect(gateGroupsOf({ KRPLY_GATE_GROUPS: "Not A Group" })).toEqual(["*"]);
    expect(() => loadConfig({ KRPLY_GATE_GROUPS: "Not A Group" })).toThrow(
      /KRPLY_GATE_GROUPS="Not A Group" is invalid: must be \*, core or an API group name/,
    );
  });
});

describe("logLevelOf", () => {
  it("reads the level by the same rule as loadConfig, and never throws", () => {
    expect(logLevelOf({})).toBe("info");
    expect(logLevelOf({ LOG_LEVEL: "debug" })).toBe("debug");
    expect(logLevelOf({ LOG_LEVEL: "debug", KRPLY_LOG_LEVEL: " warn " })).toBe("warn");
    // loadConfig reports the bad value where the configuration is loaded.
    expect(logLevelOf({ KRPLY_LOG_LEVEL: "loud" })).toBe("info");
  });
});

describe("ConfigSchema", () => {
  it("describes every setting and converts to JSON Schema (for the chart values)", () => {
    const { properties } = inputSchema();
    expect(Object.keys(properties).every(name => name.startsWith("KRPLY_"))).toBe(true);
    for (const [name, p] of Object.entries(properties)) {
      expect([name, typeof p.description, (p.description ?? "").length > 20]).toEqual([
        name,
        "string",
        true,
      ]);
      if (p.default !== undefined) expect([name, typeof p.default]).toEqual([name, "string"]);
    }
  });

  it("agrees with package.json pepr.env, which Pepr writes into the manifests", () => {
    const env: Record<string, string> = pkg.pepr.env;
    const krply = Object.keys(env).filter(name => name.startsWith("KRPLY_"));
    expect(krply.filter(name => !(name in ConfigSchema.shape))).toEqual([]);
    // pepr.env repeats the defaults (the journal path among them); they must not drift apart.
    expect(loadConfig(env)).toEqual(loadConfig({}));
  });

  it("is where the default journal path is written, and the only place in the code", () => {
    const path = inputSchema().properties.KRPLY_JOURNAL.default!;
    const root = join(__dirname, "..");
    const files: string[] = [join(root, "pepr.ts")];
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const full = join(dir, name);
        if (statSync(full).isDirectory()) walk(full);
        else if (/\.(ts|js|mjs)$/.test(name)) files.push(full);
      }
    };
    for (const dir of ["src", "capabilities", "bin", "scripts", "test", "bench"]) {
      walk(join(root, dir));
    }
    const holders = files
      .filter(f => readFileSync(f, "utf8").includes(path))
      .map(f => relative(root, f));
    expect(holders).toEqual(["src/config.ts"]);
  });
});
