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
  /**
   * The journal's change count (JournalView.changeMark) at which `mark` was last known to be the
   * journal's mark: while the count has not moved, nothing was committed, so the page holds without
   * probing its mark.
   */
  checked: number;
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
 * streams, no pruning), else made afresh and kept. The mark is probed only when the journal has
 * changed at all since the page was last checked (`state`, its change count: one pragma), so a hit
 * between two commits costs a map look-up. A mark or state that cannot be read counts as moved.
 */
export async function cachedHistory(
  cache: AnswerCache,
  input: RefInput,
  state: () => number,
  markNow: (ref: RefInput, streams: string[]) => string,
  make: () => Promise<MarkedAnswer>,
  seen: (result: "hit" | "stale" | "miss") => void = () => {},
): Promise<Buffer> {
  const key = JSON.stringify(input);
  // Read before the page is made: a commit after this moves the count, so a page made from a
  // newer journal than `now` is probed on its next hit, never trusted for a state it did not see.
  let now: number;
  try {
    now = state();
  } catch {
    now = Number.NaN;
  }
  const held = cache.get(key);
  if (held) {
    if (held.checked === now) {
      seen("hit");
      return held.bytes;
    }
    let mark: string | null;
    try {
      mark = markNow(input, held.streams);
    } catch {
      mark = null;
    }
    if (mark === held.mark) {
      held.checked = now;
      seen("hit");
      return held.bytes;
    }
    cache.delete(key);
  }
  seen(held ? "stale" : "miss");
  const fresh = await make();
  const kept = {
    bytes: Buffer.from(fresh.text),
    streams: fresh.streams,
    mark: fresh.mark,
    checked: now,
  };
  cache.set(key, kept);
  return kept.bytes;
}
