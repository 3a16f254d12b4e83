// Full events pages kept as JSON (UTF-8 bytes). Records are only ever appended after the newest seq, so a page
// that a record follows (it has a next cursor) holds the same records for as long as nothing is
// removed from the journal; the journal counts removals (JournalView.removals) and each kept page
// carries the count it was read at. A last, partial page grows with the next append: never kept.
import type { EventFilters, EventsEnvelope } from "./queries";
import { JsonText, type QueryRunner } from "./route";

interface Kept {
  removals: number;
  json: Buffer;
  bytes: number;
}

/**
 * Share of the budget that pages asked more than once may fill. The rest always has room for pages
 * asked once, and they leave first: a client paging through the journal once (an export, a scan)
 * evicts other such pages, never the pages that are asked again and again.
 */
const PROTECTED_SHARE = 7 / 8;

/**
 * Pages by their query, up to a budget of bytes: a segmented LRU. A new page is kept on probation;
 * asked again, it moves to the protected segment. Past the budget, probation's least recently used
 * leave first; protected pages past their share go back to probation.
 */
export class PageCache {
  private readonly probation = new Map<string, Kept>();
  private readonly protected = new Map<string, Kept>();
  private used = 0;
  private protectedBytes = 0;
  private readonly protectedMax: number;
  hits = 0;
  misses = 0;

  constructor(
    readonly maxBytes: number,
    /** Told how each get met the cache: hit, stale (kept before a removal) or miss. */
    private readonly seen: (result: "hit" | "stale" | "miss") => void = () => undefined,
  ) {
    this.protectedMax = maxBytes * PROTECTED_SHARE;
  }

  get bytes(): number {
    return this.used;
  }

  get size(): number {
    return this.probation.size + this.protected.size;
  }

  /** The page's JSON when it was kept at this removal count. */
  get(key: string, removals: number): Buffer | undefined {
    const kept = this.protected.get(key) ?? this.probation.get(key);
    if (kept) this.drop(key, kept);
    if (!kept || kept.removals !== removals) {
      this.misses++;
      this.seen(kept ? "stale" : "miss");
      return undefined;
    }
    // Re-inserted: a Map iterates in insertion order, so the oldest entry is the least recently used.
    this.protected.set(key, kept);
    this.protectedBytes += kept.bytes;
    this.used += kept.bytes;
    for (const [k, v] of this.protected) {
      if (this.protectedBytes <= this.protectedMax) break;
      this.drop(k, v);
      this.keep(this.probation, k, v);
    }
    this.hits++;
    this.seen("hit");
    return kept.json;
  }

  set(key: string, removals: number, json: Buffer): void {
    const bytes = json.length + key.length;
    if (bytes > this.maxBytes) return;
    const old = this.protected.get(key) ?? this.probation.get(key);
    if (old) this.drop(key, old);
    this.keep(this.probation, key, { removals, json, bytes });
    for (const segment of [this.probation, this.protected]) {
      for (const [k, v] of segment) {
        if (this.used <= this.maxBytes) return;
        this.drop(k, v);
      }
    }
  }

  private keep(segment: Map<string, Kept>, key: string, kept: Kept): void {
    segment.set(key, kept);
    this.used += kept.bytes;
  }

  private drop(key: string, kept: Kept): void {
    if (this.protected.delete(key)) this.protectedBytes -= kept.bytes;
    else this.probation.delete(key);
    this.used -= kept.bytes;
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
