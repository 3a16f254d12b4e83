// Object records are deduplicated without a global index on event_id: a unique index over random
// 16-byte ids dirties about one page per inserted row at every commit, which costs more than the
// rest of the write path together. Instead an in-memory Bloom filter answers "certainly new" for
// almost every record, and only a "maybe" pays for an exact look-up in the object's own rows (an
// eventId covers the object's uid, so a redelivered copy is always a copy of the same object).
//
// A copy can only arrive from a stream's resume point onward: a watch resumes from its durable
// checkpoint, and a relist writes baseline ids that name the list itself, so they never repeat. The
// filter therefore covers a window of the newest records only (two fixed-size generations), which
// bounds its memory and keeps every rebuild off the write path. A stream whose checkpoint lies
// before the window (one that was quiet while others wrote, or one resumed after a long stop) falls
// back to the exact look-up until its next checkpoint moves it inside the window.
import type Database from "better-sqlite3";

const BITS_PER_ID = 16; // with K hashes in one 512-bit block: about 0.1% false positives at capacity
const K = 8;
const MIN_BITS = 1 << 14;
// All K bits of an id sit in one 64-byte block, so a look-up or an add touches one cache line
// instead of K scattered ones; a cold cache line costs more than the hashing.
const BLOCK_WORDS = 16;

/** Ids per generation by default: two generations take 1 MiB and cover 256k to 512k object records. */
export const DEDUP_WINDOW_DEFAULT = 1 << 18;

function strHash(s: string, seed: number): number {
  let h = seed >>> 0;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** A blocked Bloom filter over stored event ids (packed 16-byte ids or text ids), of fixed size. */
export class IdFilter {
  private readonly bits: Uint32Array;
  private readonly blockMask: number;
  private count = 0;
  /** Look-ups that could not be ruled out in memory (duplicates and false positives). */
  maybes = 0;

  constructor(private readonly capacity: number) {
    // A power of two of at least BITS_PER_ID per id: between 2 and 4 bytes per id.
    let m = MIN_BITS;
    while (m < capacity * BITS_PER_ID) m *= 2;
    this.bits = new Uint32Array(m >>> 5);
    this.blockMask = (m >>> 5) / BLOCK_WORDS - 1;
  }

  private hashes(id: Buffer | string): [number, number] {
    if (typeof id !== "string" && id.length >= 8)
      return [id.readUInt32LE(0), id.readUInt32LE(4) | 1];
    const s = typeof id === "string" ? id : id.toString("hex");
    return [strHash(s, 0x811c9dc5), strHash(s, 0x9e3779b9) | 1];
  }

  /** Adds an id. */
  add(id: Buffer | string): void {
    const [h1, h2] = this.hashes(id);
    const base = (h1 & this.blockMask) * BLOCK_WORDS;
    for (let i = 0; i < K; i++) {
      const b = (h2 + Math.imul(i, (h2 >>> 16) | 1)) & 511;
      this.bits[base + (b >>> 5)] |= 1 << (b & 31);
    }
    this.count++;
  }

  /** False when the id was certainly never added. */
  mayHave(id: Buffer | string): boolean {
    const [h1, h2] = this.hashes(id);
    const base = (h1 & this.blockMask) * BLOCK_WORDS;
    for (let i = 0; i < K; i++) {
      const b = (h2 + Math.imul(i, (h2 >>> 16) | 1)) & 511;
      if ((this.bits[base + (b >>> 5)] & (1 << (b & 31))) === 0) return false;
    }
    this.maybes++;
    return true;
  }

  /** Forgets every id, keeping the memory. */
  clear(): void {
    this.bits.fill(0);
    this.count = 0;
  }

  /** Whether the filter holds its design number of ids. */
  get full(): boolean {
    return this.count >= this.capacity;
  }

  get size(): number {
    return this.count;
  }

  get bytes(): number {
    return this.bits.byteLength;
  }
}

/**
 * The ids of the newest object records, in two generations of `capacity` ids each: when the current
 * one fills, the older is cleared and becomes current. Memory is fixed at construction, and the
 * window always holds at least the newest `capacity` object records.
 */
export class DedupWindow {
  private current: IdFilter;
  private previous: IdFilter;
  /** First seq the previous generation (or, before any rotation, the current one) covers. */
  private start: number;
  private currentStart: number;
  /** Per stream row: a seq at or before the record of its durable checkpoint (where copies can begin). */
  private readonly resumeSeq = new Map<number, number>();
  /** Records checked by exact look-up because their stream resumes before the window. */
  exactChecks = 0;

  constructor(
    readonly capacity: number,
    start = 0,
  ) {
    this.current = new IdFilter(capacity);
    this.previous = new IdFilter(capacity);
    this.start = start;
    this.currentStart = start;
  }

  /** Whether a record of this stream could copy one older than the window, so the filter cannot rule it out. */
  needsExact(stream: number, seq: number): boolean {
    let from = this.resumeSeq.get(stream);
    if (from === undefined) {
      // A stream unknown at open was created since: every record of it lies at or after this one.
      from = seq;
      this.resumeSeq.set(stream, from);
    }
    if (from >= this.start) return false;
    this.exactChecks++;
    return true;
  }

  /** Whether the id may be in the window (false: certainly not). */
  mayHave(id: Buffer | string): boolean {
    return this.current.mayHave(id) || (this.previous.size > 0 && this.previous.mayHave(id));
  }

  /** Adds the id of the object record stored at seq. */
  add(id: Buffer | string, seq: number): void {
    if (this.current.full) {
      const old = this.previous;
      this.previous = this.current;
      this.start = this.currentStart;
      old.clear();
      this.current = old;
      this.currentStart = seq;
    }
    this.current.add(id);
  }

  /** The stream's checkpoint moved to a record at or after seq. */
  checkpointAt(stream: number, seq: number): void {
    const prev = this.resumeSeq.get(stream);
    if (prev === undefined || seq > prev) this.resumeSeq.set(stream, seq);
  }

  /** Sets where a stream's copies can begin, from what open found on disk (-1: unknown). */
  resumeAt(stream: number, seq: number): void {
    this.resumeSeq.set(stream, seq);
  }

  get maybes(): number {
    return this.current.maybes + this.previous.maybes;
  }

  /** Bytes of filter memory: fixed, whatever the journal's length. */
  get bytes(): number {
    return this.current.bytes + this.previous.bytes;
  }

  /** Ids held now. */
  get size(): number {
    return this.current.size + this.previous.size;
  }

  /** The oldest seq the window covers. */
  get windowStart(): number {
    return this.start;
  }
}

/**
 * The window a writer starts with: empty, beginning at the next record, so opening reads no rows
 * whatever the journal's length. Every stream already on disk resumes before it, so its records take
 * the exact look-up until its first checkpoint in this session; that first batch holds exactly the
 * records a resume can repeat.
 */
export function loadDedupWindow(
  db: Database.Database,
  nextSeq: number,
  capacity = DEDUP_WINDOW_DEFAULT,
): DedupWindow {
  const win = new DedupWindow(capacity, nextSeq);
  for (const [id] of db.prepare("SELECT id FROM streams").raw().all() as [number][])
    win.resumeAt(id, -1);
  return win;
}
