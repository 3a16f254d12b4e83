import {
  appendFileSync,
  mkdtempSync,
  renameSync,
  rmSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LogFollower } from "./follow";
import { BoundedLines } from "./lines";

async function until(cond: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise(r => setTimeout(r, 10));
  }
}

// Polling on a loaded machine: a few seconds per step are normal.
jest.setTimeout(30_000);

describe("BoundedLines", () => {
  it("drops a line over the bound without buffering it, across chunks, and counts it once", () => {
    const s = new BoundedLines(8);
    const out: string[] = [];
    s.push(Buffer.from("short\nthis line is"), out);
    s.push(Buffer.from(" far too long for the bound"), out);
    s.push(Buffer.from(" still\nok\n"), out);
    expect(out).toEqual(["short", "ok"]);
    expect(s.huge).toBe(1);
    expect(s.pending).toBe(0);
  });
});

describe("LogFollower", () => {
  let dir: string;
  let stop: AbortController;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "krply-follow-"));
    stop = new AbortController();
  });
  afterEach(() => {
    stop.abort();
    rmSync(dir, { recursive: true, force: true });
  });

  it("follows appends, a rename rotation and a truncation without losing a line", async () => {
    const path = join(dir, "audit.log");
    writeFileSync(path, "1\n2\n");
    const seen: string[] = [];
    const f = new LogFollower(path, lines => void seen.push(...lines), {
      maxLineBytes: 1024,
      pollMs: 10,
    });
    const done = f.follow(stop.signal);
    await until(() => seen.length === 2);
    appendFileSync(path, "3\n4");
    await until(() => seen.length === 3);
    // Rotation as kube-apiserver does it: rename, keep writing to the old file briefly, new file.
    renameSync(path, join(dir, "audit-1.log"));
    appendFileSync(join(dir, "audit-1.log"), "\n5\n");
    writeFileSync(path, "6\n");
    await until(() => seen.length === 6);
    // Copy-and-truncate rotation: the shrink is seen, then the file is read from its start.
    truncateSync(path, 0);
    await until(() => f.stats.truncations === 1);
    appendFileSync(path, "7\n");
    await until(() => seen.length === 7);
    stop.abort();
    await done;
    expect(seen).toEqual(["1", "2", "3", "4", "5", "6", "7"]);
    expect(f.stats).toMatchObject({ rotations: 1, truncations: 1 });
  });

  it("waits for a file that does not exist yet", async () => {
    const path = join(dir, "later.log");
    const seen: string[] = [];
    const f = new LogFollower(path, lines => void seen.push(...lines), {
      maxLineBytes: 1024,
      pollMs: 10,
    });
    const done = f.follow(stop.signal);
    await new Promise(r => setTimeout(r, 50));
    writeFileSync(path, "a\n");
    await until(() => seen.length === 1);
    stop.abort();
    await done;
  });
});
