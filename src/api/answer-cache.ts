// Answers of the history route, kept as the JSON text the worker made, so a page asked again costs a
// few index look-ups instead of decoding and diffing its versions. Bounded by bytes (the texts are
// counted as one byte per character, which JSON of ASCII is), least recently used out first.
import type { RefInput } from "./queries";

/** A history page's text, the streams it rests on, and the journal's mark for them when it was made. */
export interface MarkedAnswer {
  text: string;
  streams: string[];
  mark: string;
}

export class AnswerCache {
  private readonly entries = new Map<string, MarkedAnswer>();
  private used = 0;

  constructor(readonly maxBytes: number) {}

  get bytes(): number {
    return this.used;
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: string): MarkedAnswer | undefined {
    const e = this.entries.get(key);
    if (e) {
      // Map keeps insertion order: re-inserting makes this the most recently used.
      this.entries.delete(key);
      this.entries.set(key, e);
    }
    return e;
  }

  set(key: string, value: MarkedAnswer): void {
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

const sizeOf = (key: string, v: MarkedAnswer): number =>
  key.length + v.text.length + v.mark.length + v.streams.reduce((n, s) => n + s.length, 64);

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
): Promise<string> {
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
      return held.text;
    }
    cache.delete(key);
  }
  seen(held ? "stale" : "miss");
  const fresh = await make();
  cache.set(key, fresh);
  return fresh.text;
}
