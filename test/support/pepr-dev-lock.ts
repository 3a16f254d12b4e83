// `pepr dev` serves on a fixed port (3000) and registers webhooks under fixed names (pepr-krply), so two
// test files running it at once against the shared API server would take over each other's module.
// This lock, a directory created atomically, lets them take turns across jest workers.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const LOCK = join(tmpdir(), "krply-pepr-dev.lock");

function ownerAlive(): boolean {
  try {
    const pid = Number(readFileSync(join(LOCK, "pid"), "utf8"));
    if (!Number.isInteger(pid) || pid <= 0) return false;
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Waits (up to timeoutMs) until this process holds the pepr dev lock; release() gives it back. */
export async function acquirePeprDevLock(timeoutMs = 600_000): Promise<() => void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      mkdirSync(LOCK);
      writeFileSync(join(LOCK, "pid"), String(process.pid));
      return () => rmSync(LOCK, { recursive: true, force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    // A holder that died (a killed jest worker) leaves the directory behind; its pid tells.
    // A holder that has only just created the directory has no pid file yet: give it a moment.
    await new Promise(r => setTimeout(r, 1000));
    if (!ownerAlive()) {
      try {
        readFileSync(join(LOCK, "pid"));
        rmSync(LOCK, { recursive: true, force: true });
      } catch {
        // No pid file after a second: a holder that died between mkdir and write, or one still
        // writing; the next round decides.
      }
    }
    if (Date.now() > deadline) throw new Error(`waited ${timeoutMs} ms for ${LOCK}`);
  }
}
