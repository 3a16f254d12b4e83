import type { BaseVersion } from "../codec/codec";

/** An object's current keyframe, kept so its next version can be diffed without a read. */
export type CachedVersion = BaseVersion;

/** Where an object's current keyframe is, without the keyframe itself. */
export type KeyframePosition = Omit<BaseVersion, "object">;

/**
 * A bounded, approximately least-recently-used map; Map keeps insertion order, so the first key is
 * the oldest. A hit moves an entry to the young end only once it has aged past half the capacity,
 * which keeps LRU order where it matters and skips a delete+insert on most hits.
 */
export class LruCache<K, V> {
  private readonly map = new Map<K, { v: V; at: number }>();
  private tick = 0;
  hits = 0;
  misses = 0;

  constructor(private readonly capacity: number) {}

  get(key: K): V | undefined {
    const e = this.map.get(key);
    if (e === undefined) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    if (this.tick - e.at > this.capacity >> 1) {
      this.map.delete(key);
      e.at = ++this.tick;
      this.map.set(key, e);
    }
    return e.v;
  }

  set(key: K, value: V): void {
    if (this.capacity <= 0) return;
    this.map.delete(key);
    this.map.set(key, { v: value, at: ++this.tick });
    if (this.map.size > this.capacity) {
      this.map.delete(this.map.keys().next().value as K);
    }
  }

  delete(key: K): void {
    this.map.delete(key);
  }

  clear(): void {
    this.map.clear();
  }

  get size(): number {
    return this.map.size;
  }
}
