// The one memory budget of the answers the sidecar keeps for questions asked again: history pages
// (answer-cache.ts) and full events pages (event-pages.ts). Each kind kept its own budget before,
// and both full at once put the sidecar over its memory target while each alone was idle most of
// the time; sharing one budget lets whichever is asked use the room.

/** A kept value and what it costs the budget. */
interface Entry {
  value: unknown;
  bytes: number;
}

/** One kind of kept value: its own keys, the budget's room. */
export interface Shelf<V> {
  get(key: string): V | undefined;
  set(key: string, value: V, bytes: number): void;
  delete(key: string): void;
  readonly budget: KeptBytes;
}

/**
 * Share of the budget that entries asked more than once may fill. The rest always has room for
 * entries asked once, and they leave first: a client paging through the journal once (an export, a
 * scan, the history of every object) evicts other such entries, never those asked again and again.
 */
const PROTECTED_SHARE = 7 / 8;

/**
 * Values by key up to a budget of bytes: a segmented LRU. A new entry is kept on probation; asked
 * again, it moves to the protected segment. Past the budget, probation's least recently used leave
 * first; protected entries past their share go back to probation.
 */
export class KeptBytes {
  private readonly probation = new Map<string, Entry>();
  private readonly protected = new Map<string, Entry>();
  private used = 0;
  private protectedBytes = 0;
  private readonly protectedMax: number;

  constructor(readonly maxBytes: number) {
    this.protectedMax = maxBytes * PROTECTED_SHARE;
  }

  get bytes(): number {
    return this.used;
  }

  get size(): number {
    return this.probation.size + this.protected.size;
  }

  /** The value, now the most recently used of the protected segment. */
  get(key: string): unknown {
    const e = this.protected.get(key) ?? this.probation.get(key);
    if (!e) return undefined;
    this.drop(key, e);
    // Re-inserted: a Map iterates in insertion order, so the oldest entry is the least recently used.
    this.protected.set(key, e);
    this.protectedBytes += e.bytes;
    this.used += e.bytes;
    for (const [k, v] of this.protected) {
      if (this.protectedBytes <= this.protectedMax) break;
      this.drop(k, v);
      this.probation.set(k, v);
      this.used += v.bytes;
    }
    return e.value;
  }

  /** Keeps a value on probation; one larger than the whole budget is not kept. */
  set(key: string, value: unknown, bytes: number): void {
    this.delete(key);
    if (bytes > this.maxBytes) return;
    this.probation.set(key, { value, bytes });
    this.used += bytes;
    for (const segment of [this.probation, this.protected]) {
      for (const [k, v] of segment) {
        if (this.used <= this.maxBytes) return;
        this.drop(k, v);
      }
    }
  }

  /**
   * The values of one kind, under keys of their own: every shelf of a budget is told apart by its
   * prefix, so a value read back through it is the type it was kept as.
   */
  shelf<V>(prefix: string): Shelf<V> {
    return {
      get: key => this.get(prefix + key) as V | undefined,
      set: (key, value, bytes) => this.set(prefix + key, value, bytes),
      delete: key => this.delete(prefix + key),
      budget: this,
    };
  }

  delete(key: string): void {
    const e = this.protected.get(key) ?? this.probation.get(key);
    if (e) this.drop(key, e);
  }

  private drop(key: string, e: Entry): void {
    if (this.protected.delete(key)) this.protectedBytes -= e.bytes;
    else this.probation.delete(key);
    this.used -= e.bytes;
  }
}
