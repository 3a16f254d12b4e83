// Object records are deduplicated without a global index on event_id: a unique index over random
// 16-byte ids dirties about one page per inserted row at every commit, which costs more than the
// rest of the write path together. Instead an in-memory Bloom filter answers "certainly new" for
// almost every record, and only a "maybe" pays for an exact look-up in the object's own rows (an
// eventId covers the object's uid, so a redelivered copy is always a copy of the same object).
import type Database from "better-sqlite3";

const BITS_PER_ID = 16; // with K hashes in one 512-bit block: about 0.1% false positives at capacity
const K = 8;
const MIN_BITS = 1 << 23; // 1 MiB
// All K bits of an id sit in one 64-byte block, so a look-up or an add touches one cache line
// instead of K scattered ones; a cold cache line costs more than the hashing.
const BLOCK_WORDS = 16;

function strHash(s: string, seed: number): number {
  let h = seed >>> 0;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** A blocked Bloom filter over stored event ids (packed 16-byte ids or text ids). */
export class IdFilter {
  private bits: Uint32Array;
  private blockMask: number;
  private readonly totalBits: number;
  private count = 0;
  /** Look-ups that could not be ruled out in memory (duplicates and false positives). */
  maybes = 0;

  constructor(expected: number) {
    let m = MIN_BITS;
    while (m < expected * BITS_PER_ID * 2) m *= 2;
    this.totalBits = m;
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

  /** Whether the filter has filled past its design size and should be rebuilt larger. */
  get full(): boolean {
    return this.count * BITS_PER_ID > this.totalBits;
  }

  get size(): number {
    return this.count;
  }
}

/** Builds the filter from every stored object record's id (one sequential scan at open). */
export function loadIdFilter(db: Database.Database): IdFilter {
  const n = (db.prepare("SELECT count(*) AS n FROM records").get() as { n: number }).n;
  const f = new IdFilter(n);
  const ids = db
    .prepare("SELECT event_id FROM records WHERE object IS NOT NULL")
    .raw()
    .iterate() as Iterable<[Buffer | string]>;
  for (const [id] of ids) f.add(id);
  return f;
}
