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

/** Pages by their query, up to a budget of bytes; the least recently used leave first. */
export class PageCache {
  private readonly pages = new Map<string, Kept>();
  private used = 0;
  hits = 0;
  misses = 0;

  constructor(readonly maxBytes: number) {}

  get bytes(): number {
    return this.used;
  }

  get size(): number {
    return this.pages.size;
  }

  /** The page's JSON when it was kept at this removal count. */
  get(key: string, removals: number): Buffer | undefined {
    const kept = this.pages.get(key);
    if (kept) this.drop(key, kept);
    if (!kept || kept.removals !== removals) {
      this.misses++;
      return undefined;
    }
    // Re-inserted: a Map iterates in insertion order, so the oldest entry is the least recently used.
    this.pages.set(key, kept);
    this.used += kept.bytes;
    this.hits++;
    return kept.json;
  }

  set(key: string, removals: number, json: Buffer): void {
    const bytes = json.length + key.length;
    if (bytes > this.maxBytes) return;
    const old = this.pages.get(key);
    if (old) this.drop(key, old);
    this.pages.set(key, { removals, json, bytes });
    this.used += bytes;
    for (const [k, v] of this.pages) {
      if (this.used <= this.maxBytes) break;
      this.drop(k, v);
    }
  }

  private drop(key: string, kept: Kept): void {
    this.pages.delete(key);
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
  // The shape answer() gives: data, coverage, warnings.
  const rest = `,"coverage":${JSON.stringify(env.coverage)},"warnings":${JSON.stringify(env.warnings)}}`;
  return new JsonText([DATA, page, Buffer.from(rest)]);
}
