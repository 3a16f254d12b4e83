import type { KeyframePosition } from "./cache";

/** Slots the table starts with; object ids below it never collide. */
const MIN_SLOTS = 1 << 16;
/** Slots it grows to at most (24 bytes each: 24 MiB); ids further apart than this share slots. */
const MAX_SLOTS = 1 << 20;

/**
 * Where the current keyframe of every object the writer has stored is, by object id: the seq of the
 * keyframe, the patches taken against it and its JSON length. A writer of a big cluster misses its
 * cache of keyframe objects on nearly every event, and without the position it searches the object
 * index bucket by bucket and counts the patches since (docs/benchmarks.md, scale). Three numbers per
 * object in typed arrays, so a million objects cost no heap objects and nothing to the collector.
 *
 * Object ids are row ids, dense from 1, so a slot per id (id modulo the size) holds every object of a
 * cluster without collision; the table doubles up to MAX_SLOTS as ids grow. A slot keeps its id, and
 * a look-up of another id sharing it is a miss (the writer then searches, as without the table).
 */
export class KeyframeTable {
  private ids = new Float64Array(MIN_SLOTS);
  private seqs = new Float64Array(MIN_SLOTS);
  private lens = new Int32Array(MIN_SLOTS * 2);

  /** The position recorded for the object, or undefined. */
  get(id: number): KeyframePosition | undefined {
    const i = id % this.ids.length;
    if (this.ids[i] !== id) return undefined;
    return { seq: this.seqs[i], chainLen: this.lens[2 * i], keyframeBytes: this.lens[2 * i + 1] };
  }

  /** Records the object's position once the version that moved it is durable. */
  set(id: number, pos: KeyframePosition): void {
    if (id >= this.ids.length && this.ids.length < MAX_SLOTS) this.grow(id);
    const i = id % this.ids.length;
    this.ids[i] = id;
    this.seqs[i] = pos.seq;
    this.lens[2 * i] = pos.chainLen;
    this.lens[2 * i + 1] = pos.keyframeBytes;
  }

  /** Forgets every position (the file changed underneath: another writer or a prune). */
  clear(): void {
    // Fresh arrays rather than fill(0): pages never written are never resident.
    this.ids = new Float64Array(MIN_SLOTS);
    this.seqs = new Float64Array(MIN_SLOTS);
    this.lens = new Int32Array(MIN_SLOTS * 2);
  }

  private grow(id: number): void {
    let size = this.ids.length;
    while (size <= id && size < MAX_SLOTS) size *= 2;
    const old = { ids: this.ids, seqs: this.seqs, lens: this.lens };
    this.ids = new Float64Array(size);
    this.seqs = new Float64Array(size);
    this.lens = new Int32Array(size * 2);
    for (let j = 0; j < old.ids.length; j++) {
      const oid = old.ids[j];
      if (oid === 0) continue;
      const i = oid % size;
      this.ids[i] = oid;
      this.seqs[i] = old.seqs[j];
      this.lens[2 * i] = old.lens[2 * j];
      this.lens[2 * i + 1] = old.lens[2 * j + 1];
    }
  }
}
