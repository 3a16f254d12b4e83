/** An object's current keyframe body exactly as stored: its row's seq and flags and its body bytes. */
export interface KeptBody {
  seq: number;
  flags: number;
  body: Buffer;
}

/** Where a kept body lies in the ring: its absolute write position and length. */
interface Slot {
  seq: number;
  flags: number;
  at: number;
  len: number;
}

/** Bytes before each body in the ring: the object id (float64; 0 marks filler) and the body length. */
export const RECORD_HEADER_BYTES = 12;

/**
 * Heap one kept body's index entry takes (its Map entry and Slot object): measured on Node 20 as
 * 93 bytes of heap per entry of 200k, rounded up for the Map's spare room.
 */
export const SLOT_BYTES = 112;

/** Share of the budget for the index; the rest is the ring. Sized for bodies of about 300 bytes. */
const INDEX_SHARE = 0.25;

/**
 * The writer's second tier of keyframes, behind its cache of parsed keyframe objects: every object's
 * current keyframe body as stored (deflated bytes, not the JSON text or the object), bounded by bytes,
 * oldest first out. A miss of the object cache then inflates and parses the body from memory instead
 * of reading its row back from SQLite, which in a big journal means a page read from the file. Bytes
 * rather than text or objects because a deflated body is small (289 B on average in the journal
 * bench, whose keyframes are 1354 B of JSON, and a parsed object takes more heap than its text), so
 * a MiB here covers several times more objects than a MiB of the object cache.
 *
 * The bodies are copied into one ring buffer, written round and round, with a small index by object
 * id: a Buffer per body would cost about 380 bytes of its own (view, ArrayBuffer, backing store),
 * more than a typical deflated keyframe, and a short body handed in is often a view into Node's
 * shared 8 KiB pool that must not be kept. Writing at the head evicts the oldest records at the tail;
 * a body read while in the older half of the ring is written again at the head, so bodies in use
 * stay (least recently used, approximately). The ring is allocated once at its full size but its
 * pages become resident only as they are first written, so a small journal pays for what it keeps.
 *
 * An entry is only an answer for the keyframe seq the caller names (the writer's KeyframeTable
 * position): a body kept for an older keyframe of the object is never used, and is dropped when met.
 */
export class KeyframeBodies {
  private readonly capacity: number;
  private readonly maxEntries: number;
  private ring: Buffer | null = null;
  /** Absolute positions: records lie in [tail, head), a record at p at p % capacity. */
  private head = 0;
  private tail = 0;
  private readonly index = new Map<number, Slot>();
  /** Look-ups answered with a body. */
  hits = 0;
  /** Look-ups with nothing kept for that keyframe. */
  misses = 0;

  constructor(readonly budgetBytes: number) {
    const forIndex = Math.floor(budgetBytes * INDEX_SHARE);
    this.maxEntries = Math.floor(forIndex / SLOT_BYTES);
    this.capacity = this.maxEntries > 0 ? budgetBytes - forIndex : 0;
  }

  /**
   * The body kept for the object's keyframe at seq; undefined when none is, or one for another seq.
   * The body is a view into the ring, valid until the next set: decode it at once.
   */
  get(id: number, seq: number): KeptBody | undefined {
    let s = this.index.get(id);
    if (s === undefined || s.seq !== seq) {
      // A kept body of another keyframe can never answer again: the object's keyframe only moves on.
      if (s !== undefined) this.index.delete(id);
      this.misses++;
      return undefined;
    }
    this.hits++;
    if (s.at - this.tail < (this.head - this.tail) / 2) {
      // In the older half: write it again at the head, from a copy, as the old place may be reused.
      const p = (s.at % this.capacity) + RECORD_HEADER_BYTES;
      this.set(id, seq, s.flags, Buffer.from(this.ring!.subarray(p, p + s.len)));
      s = this.index.get(id)!;
    }
    const p = (s.at % this.capacity) + RECORD_HEADER_BYTES;
    return { seq, flags: s.flags, body: this.ring!.subarray(p, p + s.len) };
  }

  /** Keeps a copy of the object's current keyframe body, replacing any older one; the oldest make room. */
  set(id: number, seq: number, flags: number, body: Buffer): void {
    this.index.delete(id);
    const n = RECORD_HEADER_BYTES + body.length;
    if (n > this.capacity) return;
    const ring = (this.ring ??= Buffer.allocUnsafeSlow(this.capacity));
    let p = this.head % this.capacity;
    if (this.capacity - p < n) {
      // No room before the ring's end: the rest of this lap is filler, and the record starts the next.
      const waste = this.capacity - p;
      this.makeRoom(waste);
      if (waste >= RECORD_HEADER_BYTES) {
        ring.writeDoubleLE(0, p);
        ring.writeUInt32LE(waste - RECORD_HEADER_BYTES, p + 8);
      }
      this.head += waste;
      p = 0;
    }
    this.makeRoom(n);
    while (this.index.size >= this.maxEntries) this.evictOldest();
    ring.writeDoubleLE(id, p);
    ring.writeUInt32LE(body.length, p + 8);
    body.copy(ring, p + RECORD_HEADER_BYTES);
    this.index.set(id, { seq, flags, at: this.head, len: body.length });
    this.head += n;
  }

  /** Forgets every body (the file changed underneath: another writer or a prune). */
  clear(): void {
    this.index.clear();
    this.head = 0;
    this.tail = 0;
  }

  /** Bodies kept. */
  get size(): number {
    return this.index.size;
  }

  /** Memory in use: the ring's span from its oldest record to its head, and the index; never above the budget. */
  get bytes(): number {
    return this.head - this.tail + this.index.size * SLOT_BYTES;
  }

  /** Evicts records at the tail until n bytes fit between the head and the tail. */
  private makeRoom(n: number): void {
    while (this.head + n - this.tail > this.capacity) this.evictOldest();
  }

  /** Evicts the record at the tail (filler, a replaced body, or a kept one, which leaves the index). */
  private evictOldest(): void {
    const ring = this.ring!;
    const q = this.tail % this.capacity;
    if (this.capacity - q < RECORD_HEADER_BYTES) {
      // Filler too short for a header: the rest of the lap.
      this.tail += this.capacity - q;
      return;
    }
    const id = ring.readDoubleLE(q);
    const len = ring.readUInt32LE(q + 8);
    if (id !== 0 && this.index.get(id)?.at === this.tail) this.index.delete(id);
    this.tail += RECORD_HEADER_BYTES + len;
  }
}
