/** An object's current keyframe body exactly as stored: its row's seq and flags and its body bytes. */
export interface KeptBody {
  seq: number;
  flags: number;
  body: Buffer;
}

/**
 * Heap and native memory one entry costs beyond its body bytes: the Map entry, the entry object, the
 * Buffer view, its ArrayBuffer and its backing store. Measured on Node 20 as resident memory per
 * entry of 100k entries with 700-byte bodies (about 380 bytes), rounded up, so the budget bounds
 * what the tier really holds and not only its bodies.
 */
export const ENTRY_OVERHEAD_BYTES = 384;

/**
 * The writer's second tier of keyframes, behind its cache of parsed keyframe objects: every object's
 * current keyframe body as stored (deflated bytes, not the JSON text or the object), bounded by bytes,
 * least recently used first out. A miss of the object cache then inflates and parses the body from
 * memory instead of reading its row back from SQLite, which in a big journal means a page read from
 * the file. Bytes rather than text or objects because a deflated body is about a fifth of the heap a
 * parsed object takes, so a MiB here covers several times more objects than a MiB of the object cache.
 *
 * An entry is only an answer for the keyframe seq the caller names (the writer's KeyframeTable
 * position): a body kept for an older keyframe of the object is never used, and is dropped when met.
 */
export class KeyframeBodies {
  private readonly map = new Map<number, KeptBody>();
  private used = 0;
  /** Look-ups answered with a body. */
  hits = 0;
  /** Look-ups with nothing kept for that keyframe. */
  misses = 0;

  constructor(readonly budgetBytes: number) {}

  /** The body kept for the object's keyframe at seq; undefined when none is, or one for another seq. */
  get(id: number, seq: number): KeptBody | undefined {
    const e = this.map.get(id);
    if (e === undefined || e.seq !== seq) {
      // A kept body of another keyframe can never answer again: the object's keyframe only moves on.
      if (e !== undefined) this.drop(id, e);
      this.misses++;
      return undefined;
    }
    this.hits++;
    // Young again: Map order is insertion order, so the first key is always the oldest.
    this.map.delete(id);
    this.map.set(id, e);
    return e;
  }

  /** Keeps the object's current keyframe body, replacing any older one, and evicts the oldest past the budget. */
  set(id: number, seq: number, flags: number, body: Buffer): void {
    const old = this.map.get(id);
    if (old !== undefined) this.drop(id, old);
    const cost = body.length + ENTRY_OVERHEAD_BYTES;
    if (cost > this.budgetBytes) return;
    this.map.set(id, { seq, flags, body: owned(body) });
    this.used += cost;
    for (const [oldest, e] of this.map) {
      if (this.used <= this.budgetBytes) break;
      this.drop(oldest, e);
    }
  }

  /** Forgets every body (the file changed underneath: another writer or a prune). */
  clear(): void {
    this.map.clear();
    this.used = 0;
  }

  /** Bodies kept. */
  get size(): number {
    return this.map.size;
  }

  /** Memory the kept bodies take, overhead per entry included; never above the budget. */
  get bytes(): number {
    return this.used;
  }

  private drop(id: number, e: KeptBody): void {
    this.map.delete(id);
    this.used -= e.body.length + ENTRY_OVERHEAD_BYTES;
  }
}

/**
 * The body in a memory block of its own. A short Buffer from Buffer.from or zlib's output is a view
 * into Node's shared 8 KiB pool, and keeping the view would keep the whole pool alive; better-sqlite3
 * hands out blobs in blocks of their own, which are kept as they are.
 */
function owned(body: Buffer): Buffer {
  if (body.byteOffset === 0 && body.buffer.byteLength === body.length) return body;
  // allocUnsafeSlow never draws from the pool (Buffer.from(buffer) would, for a short body).
  const copy = Buffer.allocUnsafeSlow(body.length);
  body.copy(copy);
  return copy;
}
