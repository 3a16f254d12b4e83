import { open, stat, type FileHandle } from "node:fs/promises";
import { logger } from "../log/logger";
import { BoundedLines } from "./lines";

const log = logger("audit");

export interface FollowOptions {
  maxLineBytes: number;
  /** How often to look for new bytes, a rotation or a truncation once the file is read to its end. */
  pollMs: number;
  /** Bytes read per call. */
  chunkBytes?: number;
}

/** Lines handed over per call; the callback's promise is awaited before reading on (back-pressure). */
export type LinesHandler = (lines: string[]) => Promise<void> | void;

export interface FollowStats {
  lines: number;
  huge: number;
  bytes: number;
  rotations: number;
  truncations: number;
}

interface Opened {
  fh: FileHandle;
  ino: number;
  dev: number;
  position: number;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise(done => {
    if (signal.aborted) return done();
    const onAbort = (): void => {
      clearTimeout(t);
      done();
    };
    const t = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      done();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * Follows a JSON-lines file the way `tail -F` does: from its start, then every appended line. When
 * the path names a new file (rotation by rename, as kube-apiserver's log rotation does), the old
 * file is read to its end first and the new one from its start, so no line is lost. A file that
 * shrinks (copy-and-truncate rotation) is read again from its start.
 */
export class LogFollower {
  readonly stats: FollowStats = { lines: 0, huge: 0, bytes: 0, rotations: 0, truncations: 0 };
  private readonly buf: Buffer;
  private splitter: BoundedLines;

  constructor(
    readonly path: string,
    private readonly onLines: LinesHandler,
    private readonly opts: FollowOptions,
  ) {
    this.buf = Buffer.allocUnsafe(opts.chunkBytes ?? 1 << 20);
    this.splitter = new BoundedLines(opts.maxLineBytes);
  }

  /** Reads the file once to its end (no following), e.g. to import an old log. */
  async readOnce(): Promise<FollowStats> {
    const f = await this.openPath();
    if (!f) throw new Error(`audit log ${this.path} does not exist`);
    try {
      await this.drain(f);
      await this.flushRest();
    } finally {
      await f.fh.close();
    }
    return this.stats;
  }

  /** Follows until the signal aborts; resolves then. Errors of the handler end the follow. */
  async follow(signal: AbortSignal): Promise<void> {
    let current: Opened | null = null;
    try {
      while (!signal.aborted) {
        if (!current) {
          current = await this.openPath();
          if (!current) {
            await sleep(this.opts.pollMs, signal);
            continue;
          }
        }
        const n = await this.drain(current);
        if (n > 0) continue;
        const now = await stat(this.path).catch(() => null);
        if (now && (now.ino !== current.ino || now.dev !== current.dev)) {
          // Rotated: lines may still have been written to the old file since the last read.
          await this.drain(current);
          await this.flushRest();
          await current.fh.close();
          current = null;
          this.stats.rotations++;
          log.info({ path: this.path }, "audit log rotated; following the new file");
          continue;
        }
        if (now && now.size < current.position) {
          this.stats.truncations++;
          log.warn({ path: this.path }, "audit log shrank; reading it again from its start");
          current.position = 0;
          this.splitter = new BoundedLines(this.opts.maxLineBytes);
          continue;
        }
        await sleep(this.opts.pollMs, signal);
      }
    } finally {
      await current?.fh.close();
    }
  }

  private async openPath(): Promise<Opened | null> {
    try {
      const fh = await open(this.path, "r");
      const s = await fh.stat();
      return { fh, ino: s.ino, dev: s.dev, position: 0 };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw new Error(`cannot open audit log ${this.path}`, { cause: err });
    }
  }

  /** Reads from the file's position to its current end; returns the bytes read. */
  private async drain(f: Opened): Promise<number> {
    let total = 0;
    for (;;) {
      const { bytesRead } = await f.fh.read(this.buf, 0, this.buf.length, f.position);
      if (bytesRead === 0) return total;
      f.position += bytesRead;
      total += bytesRead;
      this.stats.bytes += bytesRead;
      const before = this.splitter.huge;
      const lines = this.splitter.push(this.buf.subarray(0, bytesRead));
      this.stats.huge += this.splitter.huge - before;
      if (lines.length > 0) {
        this.stats.lines += lines.length;
        await this.onLines(lines);
      }
    }
  }

  /** A file left without a final newline ends its last line there. */
  private async flushRest(): Promise<void> {
    const rest = this.splitter.takeRest();
    this.splitter = new BoundedLines(this.opts.maxLineBytes);
    if (rest !== null) {
      this.stats.lines++;
      await this.onLines([rest]);
    }
  }
}
