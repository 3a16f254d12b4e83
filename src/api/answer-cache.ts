// Answers of the history route, kept as the UTF-8 bytes of the JSON the worker made, so a page asked
// again costs a few index look-ups and one write instead of decoding and diffing its versions. The
// bytes live outside the JavaScript heap (no GC scans them) and count in the bound, least recently
// used out first.
import type { RefInput } from "./queries";

/** A history page's text, the streams it rests on, and the journal's mark for them when it was made. */
export interface MarkedAnswer {
  text: string;
  streams: string[];
  mark: string;
}

/** A kept page: its JSON as bytes. */
interface Kept {
  bytes: Buffer;
  streams: string[];
  mark: string;
}

export class AnswerCache {
  private readonly entries = new Map<string, Kept>();
  private used = 0;

  constructor(readonly maxBytes: number) {}

  get bytes(): number {
    return this.used;
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: string): Kept | undefined {
    const e = this.entries.get(key);
    if (e) {
      // Map keeps insertion order: re-inserting makes this the most recently used.
      this.entries.delete(key);
      this.entries.set(key, e);
    }
    return e;
  }

  set(key: string, value: Kept): void {
    this.delete(key);
    const size = sizeOf(key, value);
    if (size > this.maxBytes) return;
    this.entries.set(key, value);
    this.used += size;
    for (const [k, v] of this.entries) {
      if (this.used <= this.maxBytes) break;
      this.entries.delete(k);
      this.used -= sizeOf(k, v);
    }
  }

  delete(key: string): void {
    const e = this.entries.get(key);
    if (!e) return;
    this.entries.delete(key);
    this.used -= sizeOf(key, e);
  }
}

const sizeOf = (key: string, v: Kept): number =>
  key.length + v.bytes.length + v.mark.length + v.streams.reduce((n, s) => n + s.length, 64);

/**
 * A history page from the cache when the journal's mark for it has not moved since it was made (no
 * new record of the object, no new gap, baseline marker, coverage change or audit record on its
 * streams, no pruning), else made afresh and kept. A mark that cannot be read counts as moved.
 */
export async function cachedHistory(
  cache: AnswerCache,
  input: RefInput,
  markNow: (ref: RefInput, streams: string[]) => string,
  make: () => Promise<MarkedAnswer>,
  seen: (result: "hit" | "stale" | "miss") => void = () => {},
): Promise<Buffer> {
  const key = JSON.stringify(input);
  const held = cache.get(key);
  if (held) {
    let mark: string | null;
    try {
      mark = markNow(input, held.streams);
    } catch {
      mark = null;
    }
    if (mark === held.mark) {
      seen("hit");
      return held.bytes;
    }
    cache.delete(key);
  }
  seen(held ? "stale" : "miss");
  const fresh = await make();
  const kept = { bytes: Buffer.from(fresh.text), streams: fresh.streams, mark: fresh.mark };
  cache.set(key, kept);
  return kept.bytes;
}
