// Object identity ids by (cluster, group, kind, namespace, name). Nested maps, because one key
// joined from the five parts means building, flattening and hashing a new string for every record,
// which costs more than the rest of the record's look-ups together.

type Names = Map<string, number>;
type Level<T> = Map<string, T>;

/** A bounded map from object identity to its id; past capacity it starts over empty. */
export class IdentityIds {
  private readonly root: Level<Level<Level<Level<Names>>>> = new Map();
  private count = 0;

  /** Entries kept before the map starts over; may change at any time. */
  capacity: number;

  constructor(capacity: number) {
    this.capacity = capacity;
  }

  /** The cached id, or undefined. */
  get(cluster: string, group: string, kind: string, ns: string, name: string): number | undefined {
    return this.root.get(cluster)?.get(group)?.get(kind)?.get(ns)?.get(name);
  }

  /** Remembers an id; when full, forgets everything first (ids are cheap to read back). */
  set(cluster: string, group: string, kind: string, ns: string, name: string, id: number): void {
    if (this.count >= this.capacity && this.get(cluster, group, kind, ns, name) === undefined)
      this.clear();
    const names = child(
      child(child(child(this.root, cluster), group), kind),
      ns,
      (): Names => new Map(),
    );
    if (!names.has(name)) this.count++;
    names.set(name, id);
  }

  clear(): void {
    this.root.clear();
    this.count = 0;
  }

  get size(): number {
    return this.count;
  }
}

function child<T>(m: Level<T>, key: string, make: () => T = () => new Map() as T): T {
  let c = m.get(key);
  if (c === undefined) {
    c = make();
    m.set(key, c);
  }
  return c;
}
