import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/**
 * Bytes of LIST answers after which the listing process runs a full garbage collection. A LIST page is
 * one string of up to a few MiB (500 objects of 4 KiB), parsed at once and garbage a moment later.
 * V8 frees such strings only in a full collection, and it starts the first one late (at an old
 * generation of more than 100 MiB with Node's defaults), so listing 10k ConfigMaps of 4 KiB left
 * 64 MiB of dead pages and strings in the recorder's RSS (docs/benchmarks.md, recorder).
 */
export const TRIM_EVERY_BYTES = 16 * 1024 * 1024;

let collector: (() => void) | null | undefined;

/**
 * The engine's handle on V8's full collection. Node only exposes gc() behind --expose-gc, a flag
 * `krply record` cannot pass to itself; setting it at run time and taking gc from a fresh context is
 * what Jest does for --logHeapUsage. Null where the runtime refuses it.
 */
function fullGc(): (() => void) | null {
  if (collector !== undefined) return collector;
  try {
    setFlagsFromString("--expose-gc");
    const gc: unknown = runInNewContext("gc");
    collector = typeof gc === "function" ? (gc as () => void) : null;
  } catch {
    collector = null;
  }
  return collector;
}

/** Follows the bytes a client has read and collects garbage once every `everyBytes` of them. */
export class HeapTrimmer {
  private atLast = 0;
  /** Full collections run so far. */
  runs = 0;

  /** `gc` defaults to V8's, looked up at the first collection: a small cluster never changes a flag. */
  constructor(
    private readonly everyBytes = TRIM_EVERY_BYTES,
    private gc?: (() => void) | null,
  ) {}

  /**
   * Called after a LIST page has been parsed and handed on, with the client's running total of bytes
   * read (every stream shares one client, so concurrent lists are counted once).
   */
  listed(totalRead: number): void {
    if (totalRead - this.atLast < this.everyBytes) return;
    this.atLast = totalRead;
    if (this.gc === undefined) this.gc = fullGc();
    if (!this.gc) return;
    this.runs++;
    this.gc();
  }
}
