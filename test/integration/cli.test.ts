// The built krply binary, in local mode (--store) and remote mode (--server, the built sidecar over
// the same journal): the same output for the same journal, clear one-line errors with documented
// exit codes, readers that never create or change files, a consistent backup of a live journal, and
// the kubectl plugin name.
import { spawn } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BATCH } from "../fixtures/journal/append-child";
import { openJournalView, type JournalView } from "../../src/journal";
import { cacheName, chunkDigest } from "../../src/cli/code-cache";
import { sharedApiServer } from "../apiserver/shared";
import { until } from "./recorder-support";
import {
  buildTools,
  startKrply,
  startSidecar,
  type BuiltTools,
  type CliRun,
  type Sidecar,
} from "../support/built-cli";
import { writeCliJournal } from "../support/cli-journal";
import { at } from "../support/journal-fixtures";

const ROOT = join(__dirname, "..", "..");
let tools: BuiltTools;
let sidecar: Sidecar;
let work: string;
let journal: string;

/** A folder anyone may read (the read-only test runs the CLI as another user). */
function openDir(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  chmodSync(d, 0o755);
  return d;
}

beforeAll(async () => {
  tools = buildTools({ api: true });
  work = openDir("krply-cli-");
  journal = join(work, "journal.db");
  writeCliJournal(journal);
  chmodSync(journal, 0o644);
  sidecar = await startSidecar(tools, { KRPLY_JOURNAL: journal, KRPLY_API_AUTH: "none" });
}, 120_000);

afterAll(async () => {
  await sidecar?.stop();
  tools?.cleanup();
  rmSync(work, { recursive: true, force: true });
});

const local = (...args: string[]) => tools.krply(["--store", journal, ...args]);
const remote = (...args: string[]) => tools.krply(["--server", sidecar.url, ...args]);

/** An error is one line on stderr, never a stack trace. */
function oneLine(stderr: string): string {
  const lines = stderr.trimEnd().split("\n");
  expect(lines).toHaveLength(1);
  expect(stderr).not.toMatch(/\n\s+at /);
  expect(lines[0]).toMatch(/^krply: /);
  return lines[0];
}

describe("local and remote mode", () => {
  const commands: string[][] = [
    ["status"],
    ["coverage"],
    ["timeline", "deploy/web", "-n", "shop"],
    ["reconstruct", "deploy/web", "-n", "shop", "--at", at(35)],
    ["reconstruct", "cm/app", "-n", "shop", "--at", at(30)],
    ["diff", "-n", "shop", "--since", at(5), "--until", at(60)],
    ["search", "we"],
    ["snapshot", "--no-record", "--at", at(35)],
    ["snapshot", "list"],
    ["export"],
    ["-o", "json", "timeline", "deploy/web", "-n", "shop"],
    ["-o", "yaml", "status"],
    ["-o", "ndjson", "coverage"],
    ["-o", "json", "diff", "--since", at(5), "--until", at(60)],
  ];

  it.each(commands.map(c => [c.join(" "), c]))("print the same for `%s`", (_name, args) => {
    const l = local(...(args as string[]));
    const r = remote(...(args as string[]));
    expect(l.stderr).toBe("");
    expect(r.stderr).toBe("");
    expect(l.status).toBe(0);
    expect(r.status).toBe(0);
    expect(l.stdout.length).toBeGreaterThan(0);
    expect(r.stdout).toBe(l.stdout);
  });

  it("show the gap beside the answer in both modes", () => {
    const tl = remote("timeline", "cm/app", "-n", "shop");
    expect(tl.stdout).toMatch(/WARNING: .*gap from .* \(410 Gone\)/);
    expect(JSON.parse(local("-o", "json", "coverage").stdout).coverage.complete).toBe(false);
  });

  it("fail the same way, with the same exit code, for an unknown kind or object", () => {
    for (const args of [
      ["timeline", "widget/web", "-n", "shop"],
      ["timeline", "deploy/nope", "-n", "shop"],
    ]) {
      const l = local(...args);
      const r = remote(...args);
      expect(l.status).toBe(3);
      expect(r.status).toBe(3);
      expect(oneLine(l.stderr)).toMatch(/never recorded|no record of Deployment shop\/nope/);
      oneLine(r.stderr);
    }
  });

  it("say clearly when the server is not there (exit 6) or the URL is wrong (exit 2)", () => {
    const gone = tools.krply(["--server", "http://127.0.0.1:9", "status"]);
    expect(gone.status).toBe(6);
    expect(oneLine(gone.stderr)).toMatch(
      /cannot reach the krply server at http:\/\/127\.0\.0\.1:9/,
    );
    const bad = tools.krply(["--server", "localhost:8080", "status"]);
    expect(bad.status).toBe(2);
    expect(oneLine(bad.stderr)).toMatch(/is not an http or https URL|must be an http/);
  });

  it("serve the sidecar metrics that docs/api.md lists", async () => {
    const doc = readFileSync(join(ROOT, "docs", "api.md"), "utf8");
    const names = [...new Set([...doc.matchAll(/`(krply_api_[a-z_]+)`/g)].map(m => m[1]))];
    expect(names.length).toBeGreaterThan(0);
    const text = await (await fetch(`${sidecar.url}/metrics`)).text();
    for (const name of names) expect(text).toContain(name);
  });
});

describe("bad input", () => {
  it("a mistyped --store creates nothing, for readers and for snapshot (exit 3)", () => {
    const missing = join(work, "nope", "journal.db");
    const typo = join(work, "jurnal.db");
    for (const [store, args] of [
      [typo, ["snapshot"]],
      [typo, ["status"]],
      [missing, ["timeline", "deploy/web"]],
      [typo, ["fsck"]],
      [typo, ["backup", "--to", join(work, "b.db")]],
    ] as const) {
      const r = tools.krply(["--store", store, ...args]);
      expect(r.status).toBe(3);
      expect(oneLine(r.stderr)).toBe(
        `krply: journal ${store} does not exist (pass --store FILE or set KRPLY_JOURNAL)`,
      );
    }
    expect(existsSync(typo)).toBe(false);
    expect(existsSync(join(work, "b.db"))).toBe(false);
    expect(existsSync(join(work, "nope"))).toBe(false);
  });

  it("names the argument or flag, never a raw zod issue list (exit 2)", () => {
    const cases: [string[], RegExp][] = [
      [
        ["timeline", "cm-00"],
        /^krply: "cm-00" is not <kind>\/<name>: name the kind too, e\.g\. configmap\/cm-00/,
      ],
      [["reconstruct", "cm/app", "-n", "shop", "--at", ""], /^krply: --at is empty: use ISO 8601/],
      [
        ["reconstruct", "cm/app", "-n", "shop", "--at", "99999999999d"],
        /^krply: --at "99999999999d" is out of range/,
      ],
      [
        ["reconstruct", "cm/app", "-n", "shop", "--at", "yesterday"],
        /^krply: --at "yesterday" is not a time/,
      ],
      [
        ["diff", "--since", "1h", "--until", "+275760-09-14T00:00:00Z"],
        /^krply: --until .* (is out of range|is not a time)/,
      ],
      [["snapshot", "--at", ""], /^krply: --at is empty/],
      [["reconstruct", "cm/app"], /^krply: pass exactly one of --at or --rv/],
    ];
    for (const [args, want] of cases) {
      const r = local(...args);
      expect({ args, status: r.status }).toEqual({ args, status: 2 });
      const line = oneLine(r.stderr);
      expect(line).toMatch(want);
      expect(line).not.toMatch(/"code":|invalid_format|\[\s*\{/);
    }
    // commander's own usage errors exit 2 as well.
    expect(local("timeline").status).toBe(2);
    expect(local("no-such-command").status).toBe(2);
  });

  it("a damaged journal: every reader says so and points to krply fsck (exit 4)", () => {
    const damaged = join(work, "damaged.db");
    writeCliJournal(damaged, 300);
    const bytes = readFileSync(damaged);
    // Garbage over the middle third: the records table's pages.
    for (let i = Math.floor(bytes.length / 3); i < Math.floor((2 * bytes.length) / 3); i++)
      bytes[i] = (i * 7919) & 0xff;
    writeFileSync(damaged, bytes);
    for (const args of [
      ["status"],
      ["coverage"],
      ["timeline", "deploy/web", "-n", "shop"],
      ["reconstruct", "deploy/web", "-n", "shop", "--at", "now"],
      ["snapshot"],
      ["snapshot", "--no-record"],
      ["search", "web"],
    ]) {
      const r = tools.krply(["--store", damaged, ...args]);
      expect({ args, status: r.status }).toEqual({ args, status: 4 });
      expect(oneLine(r.stderr)).toMatch(
        new RegExp(
          `^krply: journal ${damaged} is damaged \\(.+\\); run \`krply fsck --store ${damaged}\``,
        ),
      );
    }
    const fsck = tools.krply(["--store", damaged, "fsck"]);
    expect(fsck.status).toBe(4);
    expect(fsck.stdout + fsck.stderr).toMatch(/damaged|DAMAGED/);
  });

  it("readers leave no -wal or -shm behind, and read a journal in a read-only directory", () => {
    const dir = openDir("krply-ro-");
    const path = join(dir, "journal.db");
    writeCliJournal(path);
    chmodSync(path, 0o444);
    const before = readdirSync(dir);
    for (const args of [
      ["status"],
      ["timeline", "deploy/web", "-n", "shop"],
      ["snapshot", "--no-record"],
      ["fsck"],
    ]) {
      const r = tools.krply(["--store", path, ...args]);
      expect({ args, status: r.status, stderr: r.stderr }).toEqual({ args, status: 0, stderr: "" });
    }
    expect(readdirSync(dir)).toEqual(before);

    chmodSync(dir, 0o555);
    try {
      // root ignores permissions, so as root the CLI runs as nobody, to whom the folder is read-only.
      const asUser =
        process.getuid?.() === 0
          ? (args: string[]) =>
              tools.run("setpriv", [
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                process.execPath,
                join(tools.binDir, "krply"),
                ...args,
              ])
          : (args: string[]) => tools.krply(args);
      const r = asUser(["--store", path, "timeline", "deploy/web", "-n", "shop"]);
      expect(r.stderr).toBe("");
      expect(r.status).toBe(0);
      expect(r.stdout).toMatch(/MODIFIED/);
      // Writing is refused with a clear line, not a stack trace.
      const w = asUser(["--store", path, "snapshot"]);
      expect(w.status).toBe(5);
      oneLine(w.stderr);
    } finally {
      chmodSync(dir, 0o755);
      rmSync(dir, { recursive: true, force: true });
    }
    expect(
      readdirSync(work).filter(f => /-(wal|shm)$/.test(f) && !f.startsWith("journal.db")),
    ).toEqual([]);
  });
});

/**
 * The chunks a chunk of the built CLI loads when it runs: the chunks it requires, transitively (an
 * import() in a chunk is the loader's `__krplyImport`, which this does not follow).
 */
function staticGraph(file: string, seen = new Set<string>()): Set<string> {
  if (seen.has(file)) return seen;
  seen.add(file);
  const text = readFileSync(file, "utf8");
  for (const m of text.matchAll(/(?<![\w$.])require\("(\.[^"]+)"\)/g))
    staticGraph(join(file, "..", m[1]), seen);
  return seen;
}

/** The chunks a run of the built CLI loaded: each one it compiled left its code cache in cacheDir. */
function loadedChunks(cacheDir: string): string[] {
  const dir = join(tools.dir, "cli", "chunks");
  const byCache = new Map(
    readdirSync(dir)
      .filter(f => f.endsWith(".js"))
      .map(f => [cacheName(chunkDigest(readFileSync(join(dir, f)))), f]),
  );
  return readdirSync(join(cacheDir, "v8")).map(f => {
    const chunk = byCache.get(f);
    if (chunk === undefined) throw new Error(`code cache ${f} matches no chunk of this build`);
    return chunk;
  });
}

/** The source files (relative to the checkout) that put code into these chunks, per esbuild. */
function sourcesOf(chunks: string[]): Set<string> {
  const meta = JSON.parse(readFileSync(tools.cliMetafile, "utf8")) as {
    outputs: Record<string, { inputs: Record<string, { bytesInOutput: number }> }>;
  };
  const out = new Set<string>();
  for (const [file, o] of Object.entries(meta.outputs)) {
    if (!chunks.includes(file.split("/").at(-1)!)) continue;
    for (const [src, i] of Object.entries(o.inputs)) if (i.bytesInOutput > 0) out.add(src);
  }
  return out;
}

/** The chunks a finished run of the built CLI loaded, with a code cache of its own. */
function chunksOfRun(args: string[]): { run: CliRun; chunks: string[] } {
  const cache = mkdtempSync(join(tmpdir(), "krply-cli-cache-"));
  try {
    const run = tools.krply(args, { KRPLY_CLI_CACHE: cache });
    return { run, chunks: loadedChunks(cache) };
  } finally {
    rmSync(cache, { recursive: true, force: true });
  }
}

// Code only queries need: the materializer (object-at, diff, snapshot, timeline), the API server,
// replay, and the web UI.
const QUERY_ONLY = ["src/materialize/", "src/api/", "src/replay/", "web/"];
const queryOnly = (sources: Set<string>) =>
  [...sources].filter(s => QUERY_ONLY.some(q => s.startsWith(q))).sort();

describe("start-up", () => {
  it("`krply --help` loads no journal, SQLite, zod, YAML or kube client (they load in actions)", () => {
    const loaded = [...staticGraph(join(tools.dir, "cli", "chunks", "main.js"))];
    const text = loaded.map(f => readFileSync(f, "utf8")).join("\n");
    expect(loaded.length).toBeGreaterThan(1);
    for (const marker of [
      "better-sqlite3",
      "@kubernetes/client-node",
      "ZodType",
      "journal_mode",
      "YAMLMap",
    ])
      expect({ marker, found: text.includes(marker) }).toEqual({ marker, found: false });
  });

  it("a local read (timeline, reconstruct, ...) loads the journal but no zod, YAML or kube client", () => {
    const chunks = join(tools.dir, "cli", "chunks");
    const local = readdirSync(chunks).find(f => f.startsWith("local-"));
    expect(local).toBeDefined();
    const loaded = [...staticGraph(join(chunks, local!))];
    const text = loaded.map(f => readFileSync(f, "utf8")).join("\n");
    expect(text).toContain("journal_mode");
    // zod is for validating input, which a read of a local journal by --store does not need.
    for (const marker of ["ZodType", "@kubernetes/client-node", "YAMLMap"])
      expect({ marker, found: text.includes(marker) }).toEqual({ marker, found: false });
  });

  it("`krply record` loads undici's client but not its fetch, caches or mocks", () => {
    const chunks = join(tools.dir, "cli", "chunks");
    const recorder = readdirSync(chunks).find(f => f.startsWith("recorder-"));
    expect(recorder).toBeDefined();
    const text = [...staticGraph(join(chunks, recorder!))]
      .map(f => readFileSync(f, "utf8"))
      .join("\n");
    expect(text).toContain("journal_mode");
    expect(text).toContain("allowH2");
    // undici's index loads all of it; the kube client imports its Agent and request by path.
    for (const marker of ["fetch failed", "CacheStorage", "MockAgent"])
      expect({ marker, found: text.includes(marker) }).toEqual({ marker, found: false });
  });
});

describe("a lean recorder", () => {
  it("`krply record` loads no code only queries need: materialize, the API server, replay, the web UI", async () => {
    const api = sharedApiServer();
    const store = join(work, "record-lean.db");
    const cache = mkdtempSync(join(tmpdir(), "krply-cli-cache-"));
    const rec = startKrply(
      tools,
      ["--store", store, "record", "--kubeconfig", api.kubeconfigs.admin, "-r", "cm,deploy"],
      { KRPLY_CLI_CACHE: cache },
    );
    let recorded: string[];
    try {
      await rec.recording();
      // Past the start: both streams listed into the journal, so the write path has run too.
      await until(
        "both baselines",
        () => {
          const view = openJournalView(store);
          try {
            return view.streams().filter(s => s.baselinePresent).length === 2;
          } finally {
            view.close();
          }
        },
        30_000,
        200,
      );
      expect(await rec.stop()).toBe(0);
      // The writer thread's bundle is the recorder's alone, whether or not this run started it.
      recorded = [...loadedChunks(cache), "writer-worker.js"];
    } finally {
      await rec.stop();
      rmSync(cache, { recursive: true, force: true });
      rmSync(store, { force: true });
    }
    expect(recorded).toEqual(expect.arrayContaining([expect.stringMatching(/^recorder-/)]));
    const sources = sourcesOf(recorded);
    expect([...sources].filter(s => s.startsWith("src/watch/")).length).toBeGreaterThan(3);
    expect(queryOnly(sources)).toEqual([]);

    // Not vacuous: the same account of a query's run finds what it loads of these.
    const timeline = chunksOfRun(["--store", journal, "timeline", "deploy/web", "-n", "shop"]);
    expect(timeline.run.status).toBe(0);
    expect(queryOnly(sourcesOf(timeline.chunks))).toEqual(
      expect.arrayContaining([expect.stringMatching(/^src\/materialize\//)]),
    );
    // replay loads its code before it reads the (missing) kubeconfig of the target.
    const replay = chunksOfRun([
      "--store",
      journal,
      "replay",
      "dry-run",
      "none",
      "--kubeconfig",
      join(work, "no-kubeconfig"),
    ]);
    expect(replay.run.status).not.toBe(0);
    expect(queryOnly(sourcesOf(replay.chunks))).toEqual(
      expect.arrayContaining([expect.stringMatching(/^src\/replay\//)]),
    );
  });
});

describe("output", () => {
  it("stops quietly when the reader closes the pipe early (`krply export | head`)", async () => {
    const child = spawn(
      process.execPath,
      [join(tools.binDir, "krply"), "--store", journal, "export"],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    // The reader is gone before the first line: every write fails with EPIPE.
    child.stdout!.destroy();
    let stderr = "";
    child.stderr!.on("data", d => (stderr += String(d)));
    const code = await new Promise(r => child.on("close", r));
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
  });
});

describe("code cache", () => {
  it("fills on the first run, and a damaged, stale or unwritable cache changes nothing a user sees", () => {
    const cache = mkdtempSync(join(tmpdir(), "krply-cli-cache-"));
    try {
      const args = ["--store", journal, "timeline", "deploy/web", "-n", "shop"];
      const off = tools.krply(args, { KRPLY_CLI_CACHE: "off" });
      expect(off.status).toBe(0);
      const same = (r: { status: number | null; stdout: string; stderr: string }) =>
        expect({ status: r.status, stdout: r.stdout, stderr: r.stderr }).toEqual({
          status: 0,
          stdout: off.stdout,
          stderr: off.stderr,
        });
      same(tools.krply(args, { KRPLY_CLI_CACHE: cache }));
      const v8 = join(cache, "v8");
      const files = readdirSync(v8);
      // The entry, commander, the journal, materialize: one file per chunk the run loaded.
      expect(files.length).toBeGreaterThan(4);
      same(tools.krply(args, { KRPLY_CLI_CACHE: cache }));
      expect(readdirSync(v8).sort()).toEqual([...files].sort());
      // Damage every file past its header: V8 would crash on such a payload; the CLI ignores it.
      const damaged = new Map<string, Buffer>();
      for (const f of files) {
        const b = readFileSync(join(v8, f));
        for (let i = 48; i < b.length; i += 5) b[i] ^= 0xa5;
        writeFileSync(join(v8, f), b);
        damaged.set(f, b);
      }
      same(tools.krply(args, { KRPLY_CLI_CACHE: cache }));
      for (const f of files) expect(readFileSync(join(v8, f)).equals(damaged.get(f)!)).toBe(false);
      // Another chunk's cache under each name (an intact file V8 rejects): rewritten too.
      for (const [i, f] of files.entries())
        copyFileSync(join(v8, files[(i + 1) % files.length]), join(v8, f));
      same(tools.krply(args, { KRPLY_CLI_CACHE: cache }));
      same(tools.krply(args, { KRPLY_CLI_CACHE: cache }));
      // A cache folder that cannot be created: the run only compiles everything.
      same(tools.krply(args, { KRPLY_CLI_CACHE: join(journal, "cache") }));
    } finally {
      rmSync(cache, { recursive: true, force: true });
    }
  });
});

describe("help", () => {
  it("every command's --help has examples, and --help exits 0", () => {
    const top = tools.krply(["--help"]);
    expect(top.status).toBe(0);
    expect(top.stdout).toMatch(/Exit codes: 0 ok/);
    const names = [...top.stdout.matchAll(/^ {2}([a-z][a-z-]*)\b/gm)]
      .map(m => m[1])
      .filter(n => n !== "help");
    expect(names).toEqual(
      expect.arrayContaining([
        "timeline",
        "reconstruct",
        "diff",
        "snapshot",
        "search",
        "export",
        "coverage",
        "status",
        "fsck",
        "backup",
        "record",
      ]),
    );
    for (const name of names) {
      const h = tools.krply([name, "--help"]);
      expect({ name, status: h.status }).toEqual({ name, status: 0 });
      expect({ name, examples: /\nExamples:\n {2}\S/.test(h.stdout) }).toEqual({
        name,
        examples: true,
      });
    }
  });
});

describe("kubectl plugin", () => {
  it("`kubectl krply timeline deploy/web -n shop` runs krply (krew naming: kubectl-krply on PATH)", () => {
    const viaKubectl = tools.run("kubectl", [
      "krply",
      "--store",
      journal,
      "timeline",
      "deploy/web",
      "-n",
      "shop",
    ]);
    expect(viaKubectl.stderr).toBe("");
    expect(viaKubectl.status).toBe(0);
    expect(viaKubectl.stdout).toBe(local("timeline", "deploy/web", "-n", "shop").stdout);
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
      bin: Record<string, string>;
    };
    expect(pkg.bin["kubectl-krply"]).toBe(pkg.bin.krply);
  });
});

function eventsIn(view: JournalView): number {
  let n = 0;
  let cursor: string | undefined;
  do {
    const page = view.events({ types: ["event"], limit: 1000, cursor, includeObjects: false });
    n += page.records.length;
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return n;
}

describe("krply backup", () => {
  it("copies every committed record of a journal a writer is appending to; cp of the file does not", async () => {
    const dir = openDir("krply-backup-");
    const live = join(dir, "live.db");
    const child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        join(ROOT, "test", "fixtures", "journal", "append-child.ts"),
        "crash",
        live,
        "0",
      ],
      { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] },
    );
    let acked = -1;
    let out = "";
    child.stdout!.on("data", d => {
      out += String(d);
      for (const m of out.matchAll(/^ack (\d+)$/gm)) acked = Math.max(acked, Number(m[1]));
    });
    const waitAcks = async (n: number) => {
      const deadline = Date.now() + 60_000;
      while (acked < n) {
        if (child.exitCode !== null || Date.now() > deadline)
          throw new Error(`writer stopped: ${out}`);
        await new Promise(r => setTimeout(r, 20));
      }
    };
    try {
      await waitAcks(30);
      const committedBefore = (acked + 1) * BATCH;
      // A plain copy of the file, as `cp journal.db` would make while the writer runs.
      copyFileSync(live, join(dir, "cp.db"));
      const r = await new Promise<{ status: number | null; stdout: string; stderr: string }>(
        resolve => {
          const b = spawn(process.execPath, [
            join(tools.binDir, "krply"),
            "--store",
            live,
            "backup",
            "--to",
            join(dir, "backup.db"),
          ]);
          let so = "";
          let se = "";
          b.stdout.on("data", d => (so += String(d)));
          b.stderr.on("data", d => (se += String(d)));
          b.on("exit", status => resolve({ status, stdout: so, stderr: se }));
        },
      );
      expect(r.stderr).toBe("");
      expect(r.status).toBe(0);
      expect(r.stdout).toMatch(/^backed up .* \d+ records, \d+ pages/);
      await waitAcks(acked + 2); // the writer kept writing through the backup
      const copy = openJournalView(join(dir, "backup.db"), { idleSnapshot: true });
      try {
        const events = eventsIn(copy);
        expect(events).toBeGreaterThanOrEqual(committedBefore);
        expect(events % BATCH).toBe(0); // whole batches only: one consistent point
        expect(copy.fsck()).toMatchObject({ ok: true });
      } finally {
        copy.close();
      }
      // The copy holds only what was checkpointed into the main file: often not even the schema.
      let copied = 0;
      try {
        const cp = openJournalView(join(dir, "cp.db"), { idleSnapshot: true });
        try {
          copied = eventsIn(cp);
        } finally {
          cp.close();
        }
      } catch {
        copied = 0;
      }
      expect(copied).toBeLessThan(committedBefore);
    } finally {
      child.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
