// Every process the demo starts, so Ctrl-C can end them all: each child leads its own process group
// (pepr dev forks the module, tsx forks node), and the whole group is signalled, then killed if late.
import { spawn, type ChildProcess, type SpawnOptions } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";

/** A started child and what it printed last, for an error message when it dies early. */
export interface Child {
  name: string;
  process: ChildProcess;
  pid: number;
  exited: Promise<void>;
  /** The last ~64 KB of stdout and stderr together. */
  output(): string;
}

/**
 * The process group and state fields of a /proc/<pid>/stat line. The command name (field 2) is in
 * parentheses and may hold spaces, so the fields are counted after its closing parenthesis.
 */
export function parseProcStat(line: string): { pgid: number; state: string } | undefined {
  const close = line.lastIndexOf(")");
  if (close < 0) return undefined;
  const rest = line.slice(close + 2).split(" ");
  const pgid = Number(rest[2]);
  return rest[0] && Number.isInteger(pgid) ? { state: rest[0], pgid } : undefined;
}

/**
 * Live (not zombie) members of a process group, read from /proc. Zombies are dead: where pid 1 does not
 * reap orphans (some containers), they linger in the group without running anything.
 */
export function groupMembers(pgid: number): number[] {
  const members: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue; // It ended while we looked.
    }
    const p = parseProcStat(stat);
    if (p && p.pgid === pgid && p.state !== "Z") members.push(Number(entry));
  }
  return members;
}

/** True while a process group has a live member left. */
export function groupAlive(pgid: number): boolean {
  if (existsSync("/proc/self/stat")) return groupMembers(pgid).length > 0;
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Starts and tracks children; stopAll() ends every group, newest first. */
export class Children {
  private readonly list: Child[] = [];

  spawn(name: string, command: string, args: string[], options: SpawnOptions = {}): Child {
    const child = spawn(command, args, {
      ...options,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    if (child.pid === undefined) throw new Error(`${name}: could not start ${command}`);
    let out = "";
    const keep = (chunk: Buffer) => (out = (out + chunk.toString()).slice(-65_536));
    child.stdout?.on("data", keep);
    child.stderr?.on("data", keep);
    const exited = new Promise<void>(done => child.once("exit", () => done()));
    const entry: Child = { name, process: child, pid: child.pid, exited, output: () => out };
    this.list.push(entry);
    return entry;
  }

  /** The process group ids started so far (each child's pid). */
  pids(): number[] {
    return this.list.map(c => c.pid);
  }

  /** SIGTERM to each group, SIGKILL to what is left after graceMs; resolves when every group is gone. */
  async stopAll(graceMs = 10_000): Promise<void> {
    for (const c of [...this.list].reverse()) await stopGroup(c.pid, graceMs);
  }

  /** Last resort on a synchronous exit path: SIGKILL every group at once. */
  killAllNow(): void {
    for (const c of this.list) {
      try {
        process.kill(-c.pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    }
  }
}

/** Ends one process group: SIGTERM, then SIGKILL after graceMs, waiting until no member is left. */
export async function stopGroup(pgid: number, graceMs: number): Promise<void> {
  const signal = (s: NodeJS.Signals) => {
    try {
      process.kill(-pgid, s);
    } catch {
      // The group is gone.
    }
  };
  signal("SIGTERM");
  const deadline = Date.now() + graceMs;
  while (groupAlive(pgid)) {
    if (Date.now() > deadline) {
      signal("SIGKILL");
      // SIGKILL cannot be refused; give the kernel a moment to reap.
      const hard = Date.now() + 5_000;
      while (groupAlive(pgid) && Date.now() < hard) await new Promise(r => setTimeout(r, 50));
      return;
    }
    await new Promise(r => setTimeout(r, 50));
  }
}
