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
export function fullGc(): (() => void) | null {
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

/**
 * Bytes of LIST answers past which the cluster counts as big: its event rate, not the memory, sets
 * the bar from then on. A lean process (leanRecorderHeap) turns V8's optimizing compiler back on and
 * lets its young generation grow, and the supervisor's bigClusterTuning grows the journal's caches
 * and moves appends to the writer thread. Each of those costs memory (together 70-100 MiB), which a
 * cluster of 10k ConfigMaps of 4 KiB (38 MiB listed) cannot afford within the recorder's 200 MiB and
 * does not need: its write rate is far below what the lean recorder takes (docs/benchmarks.md,
 * recorder). 150k objects (150 MiB or more listed) are big.
 */
export const OPTIMIZE_AFTER_BYTES = 64 * 1024 * 1024;

let lean = false;

/**
 * Trades peak throughput for memory in a recorder of a small cluster, where the process is mostly
 * code and V8's buffers (docs/benchmarks.md, recorder). Two run-time V8 flags, measured on 200
 * ConfigMaps and 20 Deployments under writes:
 * - the young generation keeps its size instead of doubling up to 2 x 16 MiB semi-spaces, which the
 *   recorder's steady allocation (each event parsed, diffed, deflated) reaches and keeps resident
 *   (111 to 86 MiB peak). The maximum can only be set at start-up (--max-semi-space-size), which
 *   `krply record` cannot pass to itself; the growth factor is read at every growth.
 * - no optimizing compiler (TurboFan): its compilations take several MiB on background threads and
 *   touch another 3 MiB of node's code (83 to 73 MiB). The work is JSON parsing, deflate and SQLite,
 *   native either way: the engine still takes 1000+ events/s, ten times the API server's write rate.
 * A listing of OPTIMIZE_AFTER_BYTES or more undoes both (HeapTrimmer.listed).
 */
export function leanRecorderHeap(): void {
  setFlagsFromString("--semi-space-growth-factor=1");
  setFlagsFromString("--no-turbofan");
  lean = true;
}

/**
 * V8's own growth factor of the young generation (its flag default), restored in a big cluster: at
 * hundreds of events a second (tens of KiB allocated for each) a young generation that never grows
 * is scavenged many times a second, and the events waiting for their commit and the keyframes just
 * read survive into the old generation, which then needs full collections. Grown (to 16 MiB
 * semi-spaces) most of them die young: 7% less CPU per event on 150k objects (docs/benchmarks.md,
 * scale).
 */
const SEMI_SPACE_GROWTH_FACTOR = 2;

/**
 * Undoes leanRecorderHeap in a lean process (a no-op in any other): the optimizing compiler runs
 * again and the young generation may grow again.
 */
function optimizeAgain(): void {
  if (!lean) return;
  lean = false;
  setFlagsFromString("--turbofan");
  setFlagsFromString(`--semi-space-growth-factor=${SEMI_SPACE_GROWTH_FACTOR}`);
}

/** Follows the bytes a client has read and collects garbage once every `everyBytes` of them. */
export class HeapTrimmer {
  private atLast = 0;
  /** Full collections run so far. */
  runs = 0;

  private big = false;

  /**
   * `gc` defaults to V8's, looked up at the first collection: a small cluster never changes a flag.
   * `onBigCluster` runs once, when the listed bytes reach OPTIMIZE_AFTER_BYTES.
   */
  constructor(
    private readonly everyBytes = TRIM_EVERY_BYTES,
    private gc?: (() => void) | null,
    private readonly onBigCluster?: () => void,
  ) {}

  /**
   * Called after a LIST page has been parsed and handed on, with the client's running total of bytes
   * read (every stream shares one client, so concurrent lists are counted once).
   */
  listed(totalRead: number): void {
    if (totalRead >= OPTIMIZE_AFTER_BYTES && !this.big) {
      this.big = true;
      optimizeAgain();
      this.onBigCluster?.();
    }
    if (totalRead - this.atLast < this.everyBytes) return;
    this.atLast = totalRead;
    if (this.gc === undefined) this.gc = fullGc();
    if (!this.gc) return;
    this.runs++;
    this.gc();
  }
}
