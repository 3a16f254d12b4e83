// CLI start-up benchmark: `krply --help` and `krply timeline` on a small journal against bare
// `node -e 0`, run in turn in the same loop so a noisy machine slows all three alike.
// Target (issue 14): each within 100 ms of bare Node start-up. On a loaded shared machine wall time
// includes waiting for a CPU, so the CPU time each process used is printed beside it.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { tempJournalPath } from "../test/support/journal-fixtures";
import { writeCliJournal } from "../test/support/cli-journal";

const root = join(__dirname, "..");
const bin = join(root, "bin", "krply.js");

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

function run(args: string[]): { wallMs: number; cpuMs: number | null } {
  const c0 = childrenCpuMs();
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { stdio: ["ignore", "ignore", "pipe"] });
  const wallMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const c1 = childrenCpuMs();
  if (r.status !== 0) throw new Error(`${args.join(" ")} exited ${r.status}: ${r.stderr}`);
  return { wallMs, cpuMs: c0 === null || c1 === null ? null : c1 - c0 };
}

/** `--runs N` (default 15) rounds of the three commands. Builds the CLI first when dist/ has none. */
export async function main(args: string[]): Promise<void> {
  const i = args.indexOf("--runs");
  const runs = i >= 0 ? Number(args[i + 1]) : 15;
  if (!existsSync(join(root, "dist", "cli", "krply.js"))) {
    execFileSync("npm", ["run", "build:cli"], { cwd: root, stdio: "inherit" });
  }
  const tmp = tempJournalPath("krply-bench-cli-");
  try {
    writeCliJournal(tmp.path);
    const cases: Record<string, string[]> = {
      "node -e 0": ["-e", "0"],
      "krply --help": [bin, "--help"],
      "krply timeline": [bin, "--store", tmp.path, "timeline", "deploy/web", "-n", "shop"],
    };
    const wall: Record<string, number[]> = {};
    const cpu: Record<string, number> = {};
    for (const name of Object.keys(cases)) run(cases[name]); // warm the page cache
    for (let r = 0; r < runs; r++) {
      for (const [name, a] of Object.entries(cases)) {
        const t = run(a);
        (wall[name] ??= []).push(t.wallMs);
        cpu[name] = (cpu[name] ?? 0) + (t.cpuMs ?? NaN);
      }
    }
    const base = median(wall["node -e 0"]);
    const baseCpu = cpu["node -e 0"] / runs;
    console.log(
      `runs ${runs}; wall: median, delta and ratio against node -e 0; cpu: mean user+sys per run`,
    );
    for (const name of Object.keys(wall)) {
      const m = median(wall[name]);
      const c = cpu[name] / runs;
      console.log(
        `${name.padEnd(16)} wall ${m.toFixed(0).padStart(5)} ms  +${(m - base).toFixed(0).padStart(4)} ms  x${(m / base).toFixed(2)}` +
          (Number.isNaN(c)
            ? ""
            : `   cpu ${c.toFixed(0).padStart(4)} ms  +${(c - baseCpu).toFixed(0).padStart(4)} ms  x${(c / baseCpu).toFixed(2)}`),
      );
    }
  } finally {
    tmp.cleanup();
  }
}
