// Full events pages kept as JSON (UTF-8 bytes). Records are only ever appended after the newest seq, so a page
// that a record follows (it has a next cursor) holds the same records for as long as nothing is
// removed from the journal; the journal counts removals (JournalView.removals) and each kept page
// carries the count it was read at. A last, partial page grows with the next append: never kept.
import type { EventFilters, EventsEnvelope } from "./queries";
import type { KeptBytes, Shelf } from "./kept-bytes";
import { JsonText, type QueryRunner } from "./route";

interface Kept {
  removals: number;
  json: Buffer;
}

/**
 * Full events pages by their query, kept in the sidecar's one budget of kept answers (kept-bytes.ts,
 * a segmented LRU: pages asked once only evict each other).
 */
export class PageCache {
  private readonly shelf: Shelf<Kept>;

  constructor(
    budget: KeptBytes,
    /** Told how each get met the cache: hit, stale (kept before a removal) or miss. */
    private readonly seen: (result: "hit" | "stale" | "miss") => void = () => undefined,
  ) {
    this.shelf = budget.shelf<Kept>("events\u0000");
  }

  /** The page's JSON when it was kept at this removal count. */
  get(key: string, removals: number): Buffer | undefined {
    const kept = this.shelf.get(key);
    if (!kept || kept.removals !== removals) {
      if (kept) this.shelf.delete(key);
      this.seen(kept ? "stale" : "miss");
      return undefined;
    }
    this.seen("hit");
    return kept.json;
  }

  set(key: string, removals: number, json: Buffer): void {
    this.shelf.set(key, { removals, json }, json.length + key.length);
  }
}

export interface EventsRequest {
  filters: EventFilters;
  limit: number;
  cursor?: string;
  objects: boolean;
}

const DATA = Buffer.from('{"data":');

/** The end of an answer after its page, made once per envelope (kept until the journal changes). */
const tails = new WeakMap<EventsEnvelope, Buffer>();

function tailOf(env: EventsEnvelope): Buffer {
  let tail = tails.get(env);
  if (!tail) {
    // The shape answer() gives: data, coverage, warnings.
    tail = Buffer.from(
      `,"coverage":${JSON.stringify(env.coverage)},"warnings":${JSON.stringify(env.warnings)}}`,
    );
    tails.set(env, tail);
  }
  return tail;
}

/**
 * An events answer: its coverage from the main thread's view (kept until the journal changes), its
 * page from the cache, or else decoded in a worker and kept when it is full.
 */
export async function eventsAnswer(
  queries: QueryRunner,
  cache: PageCache | null,
  req: EventsRequest,
): Promise<JsonText> {
  const env = (await queries.run("eventsEnvelope", { filters: req.filters })) as EventsEnvelope;
  const key = JSON.stringify([env.filters, req.limit, req.cursor ?? null, req.objects]);
  let page = cache?.get(key, env.removals);
  if (page === undefined) {
    const read = await queries.run("eventsPageText", { ...req, filters: env.filters });
    // From a worker the bytes arrive as a plain Uint8Array (structured clone drops Buffer).
    page = Buffer.from(read.json.buffer, read.json.byteOffset, read.json.byteLength);
    if (read.full) cache?.set(key, read.removals, page);
  }
  return new JsonText([DATA, page, tailOf(env)]);
}
