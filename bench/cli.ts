// CLI start-up benchmark: `krply --help` and `krply timeline` on a small journal against bare
// `node -e 0`, run in turn in the same loop so a noisy machine slows all of them alike.
// Target (issue 14): within 100 ms of bare Node start-up. On a loaded shared machine wall time
// includes waiting for a CPU, so the CPU time each process used is printed beside it.
//
// The CLI keeps V8's compiled code of its chunks in a cache (src/cli/code-cache.ts). The plain rows
// run with a cache the warm-up round filled, as every run after a user's first does; the rows marked
// "no cache" run with KRPLY_CLI_CACHE=off, where the cache cannot help, and "first run" starts each
// time from an empty cache folder, so it compiles everything and also writes the cache.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { tempJournalPath } from "../test/support/journal-fixtures";
import { writeCliJournal } from "../test/support/cli-journal";

const root = join(__dirname, "..");
const bin = join(root, "bin", "krply.js");
const TARGET_MS = 100;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/** CPU time (user + system, ms) of this process's waited-for children, from /proc on Linux. */
function childrenCpuMs(): number | null {
  try {
    const stat = readFileSync("/proc/self/stat", "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // cutime and cstime are fields 16 and 17 of stat(5), in clock ticks (100 per second).
    return (Number(fields[13]) + Number(fields[14])) * 10;
  } catch {
    return null;
  }
}

function run(args: string[], env: NodeJS.ProcessEnv): { wallMs: number; cpuMs: number | null } {
  const c0 = childrenCpuMs();
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { stdio: ["ignore", "ignore", "pipe"], env });
  const wallMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const c1 = childrenCpuMs();
  if (r.status !== 0) throw new Error(`${args.join(" ")} exited ${r.status}: ${r.stderr}`);
  return { wallMs, cpuMs: c0 === null || c1 === null ? null : c1 - c0 };
}

interface Case {
  args: string[];
  /** KRPLY_CLI_CACHE for the run. */
  cache?: string;
  /** Emptied before each run (not timed). */
  fresh?: string;
}

/** `--runs N` (default 15) rounds of every case. Builds the CLI from the current sources first. */
export async function main(args: string[]): Promise<void> {
  const i = args.indexOf("--runs");
  const runs = i >= 0 ? Number(args[i + 1]) : 15;
  execFileSync("npm", ["run", "build:cli"], { cwd: root, stdio: "inherit" });
  const tmp = tempJournalPath("krply-bench-cli-");
  const caches = mkdtempSync(join(tmpdir(), "krply-bench-cli-cache-"));
  try {
    writeCliJournal(tmp.path);
    const warm = join(caches, "warm");
    const fresh = join(caches, "fresh");
    const help = [bin, "--help"];
    const timeline = [bin, "--store", tmp.path, "timeline", "deploy/web", "-n", "shop"];
    const cases: Record<string, Case> = {
      "node -e 0": { args: ["-e", "0"] },
      "krply --help": { args: help, cache: warm },
      "krply timeline": { args: timeline, cache: warm },
      "--help, no cache": { args: help, cache: "off" },
      "timeline, no cache": { args: timeline, cache: "off" },
      "timeline, first run": { args: timeline, cache: fresh, fresh },
    };
    const wall: Record<string, number[]> = {};
    const cpu: Record<string, number> = {};
    const once = (c: Case) => {
      if (c.fresh) rmSync(c.fresh, { recursive: true, force: true });
      return run(c.args, { ...process.env, KRPLY_CLI_CACHE: c.cache ?? "off" });
    };
    // Warms the page cache, and fills the warm cache as a user's first runs would.
    for (const c of Object.values(cases)) once(c);
    for (let r = 0; r < runs; r++) {
      for (const [name, c] of Object.entries(cases)) {
        const t = once(c);
        (wall[name] ??= []).push(t.wallMs);
        cpu[name] = (cpu[name] ?? 0) + (t.cpuMs ?? NaN);
      }
    }
    const base = median(wall["node -e 0"]);
    const baseCpu = cpu["node -e 0"] / runs;
    console.log(
      `runs ${runs}; wall: median, delta and ratio against node -e 0; cpu: mean user+sys per run; ` +
        `target: wall within ${TARGET_MS} ms of node -e 0`,
    );
    for (const name of Object.keys(wall)) {
      const m = median(wall[name]);
      const c = cpu[name] / runs;
      const verdict = name === "node -e 0" ? "baseline" : m - base <= TARGET_MS ? "met" : "NOT met";
      console.log(
        `${name.padEnd(20)} wall ${m.toFixed(0).padStart(5)} ms  +${(m - base).toFixed(0).padStart(4)} ms  x${(m / base).toFixed(2)}` +
          (Number.isNaN(c)
            ? ""
            : `   cpu ${c.toFixed(0).padStart(4)} ms  +${(c - baseCpu).toFixed(0).padStart(4)} ms  x${(c / baseCpu).toFixed(2)}`) +
          `   ${verdict}`,
      );
    }
  } finally {
    tmp.cleanup();
    rmSync(caches, { recursive: true, force: true });
  }
}
