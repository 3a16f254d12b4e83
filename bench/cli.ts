// CLI start-up benchmark: `krply --help` and `krply timeline` on a small journal against bare
// `node -e 0`, run in turn in the same loop so a noisy machine slows all three alike.
// Target (issue 14): each within 100 ms of bare Node start-up (median wall time).
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { tempJournalPath } from "../test/support/journal-fixtures";
import { writeCliJournal } from "../test/support/cli-journal";

const root = join(__dirname, "..");
const bin = join(root, "bin", "krply.js");

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function wallMs(args: string[]): number {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { stdio: ["ignore", "ignore", "pipe"] });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`${args.join(" ")} exited ${r.status}: ${r.stderr}`);
  return ms;
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
    const times: Record<string, number[]> = {};
    for (const name of Object.keys(cases)) wallMs(cases[name]); // warm the page cache
    for (let r = 0; r < runs; r++) {
      for (const [name, a] of Object.entries(cases)) (times[name] ??= []).push(wallMs(a));
    }
    const base = median(times["node -e 0"]);
    console.log(`runs ${runs}; median wall time; delta and ratio against node -e 0`);
    for (const [name, t] of Object.entries(times)) {
      const m = median(t);
      console.log(
        `${name.padEnd(16)} ${m.toFixed(0).padStart(5)} ms  +${(m - base).toFixed(0).padStart(4)} ms  x${(m / base).toFixed(2)}`,
      );
    }
  } finally {
    tmp.cleanup();
  }
}
