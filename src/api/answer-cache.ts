// Answers of the history route, kept as the UTF-8 bytes of the JSON the worker made, so a page asked
// again costs a few index look-ups and one write instead of decoding and diffing its versions. The
// bytes live outside the JavaScript heap (no GC scans them) and count in the sidecar's one budget of
// kept answers, which events pages share.
import type { KeptBytes, Shelf } from "./kept-bytes";
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

/** What a kept page costs the budget: its bytes, and about what its key and mark take on the heap. */
const sizeOf = (key: string, v: Kept): number =>
  key.length + v.bytes.length + v.mark.length + v.streams.reduce((n, s) => n + s.length, 64);

/** History pages in the sidecar's one budget of kept answers (kept-bytes.ts). */
export class AnswerCache {
  private readonly shelf: Shelf<Kept>;

  constructor(readonly budget: KeptBytes) {
    this.shelf = budget.shelf<Kept>("history\u0000");
  }

  get(key: string): Kept | undefined {
    return this.shelf.get(key);
  }

  set(key: string, value: Kept): void {
    this.shelf.set(key, value, sizeOf(key, value));
  }

  delete(key: string): void {
    this.shelf.delete(key);
  }
}

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
