import { checkpointRecord, eventRecord, type JournalRecord, type StreamKey } from "../event";
import { isRecordFault, type AppendBatch, type Journal } from "../journal";
import { SinkError } from "./decide";

/** The stream that queued an item; told when its records are durable or failed. */
export interface SinkOwner {
  readonly streamId: string;
  readonly key: StreamKey;
  /** Items queued under an older epoch are dropped: the stream already moved on. */
  readonly epoch: number;
  committed(item: SinkItem, committedAt: number): void;
  failed(err: SinkError): void;
}

export interface SinkItem {
  owner: SinkOwner;
  epoch: number;
  records: JournalRecord[];
  /** The position these records make durable, committed in the same transaction. */
  checkpointRv?: string;
  /** When the bytes were read from the socket, for ingest lag. */
  receivedAt: number;
}

export interface SinkOptions {
  /** Records allowed in the queue before producers wait (and so stop reading their sockets). */
  capacity: number;
  /** Records per transaction. */
  maxBatch: number;
  /**
   * Shortest time between the starts of two commits (0: commit as soon as anything is queued). Under
   * load the items that arrive meanwhile share the next commit; a lone event after a quiet spell
   * still commits at once.
   */
  commitEveryMs?: number;
}

/** Batches appended and not yet durable at once (see flush). */
const IN_FLIGHT = 2;

/**
 * A bounded FIFO in front of the journal. Streams push in order; a flush commits everything queued in
 * one transaction (group commit). A full queue makes push wait, which stops the caller reading its
 * socket, so a slow disk turns into TCP backpressure, never into memory.
 */
export class JournalSink {
  private queue: SinkItem[] = [];
  private queuedRecords = 0;
  private scheduled = false;
  private timer: NodeJS.Timeout | null = null;
  private lastCommitAt = Number.NEGATIVE_INFINITY;
  private cadenceMs: number;
  private waiters: (() => void)[] = [];
  private settledWaiters: (() => void)[] = [];
  private refused = false;
  /** Batches appended and not yet reported, oldest first (at most IN_FLIGHT); err once answered. */
  private readonly inFlight: { items: SinkItem[]; answered: boolean; err: unknown }[] = [];

  constructor(
    private readonly journal: Journal,
    private readonly opts: SinkOptions,
    private readonly hooks: {
      onCommit?: (items: SinkItem[], committedAt: number) => void;
      onError?: (err: SinkError) => void;
      /** A record the journal refused, stored as an error record in its place. */
      onRejected?: (record: JournalRecord, err: unknown) => void;
    } = {},
  ) {
    this.cadenceMs = opts.commitEveryMs ?? 0;
  }

  /** Sets the shortest time between two commits (SinkOptions.commitEveryMs) from now on. */
  commitEvery(ms: number): void {
    this.cadenceMs = ms;
  }

  /** Records waiting to be committed. */
  get depth(): number {
    return this.queuedRecords;
  }

  /** Drops everything queued and everything pushed from now on: the journal must not be written. */
  refuse(): void {
    this.refused = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.scheduled = false;
    this.queue = [];
    this.queuedRecords = 0;
    for (const w of this.waiters.splice(0)) w();
    for (const w of this.settledWaiters.splice(0)) w();
  }

  /**
   * Queues an item. While the queue is over capacity it returns a promise that resolves once there
   * is room (never when the item is durable); with room it returns nothing, so an event on the hot
   * path costs no promise and no turn of the event loop.
   */
  push(item: SinkItem): Promise<void> | undefined {
    if (this.refused) return undefined;
    this.queue.push(item);
    this.queuedRecords += item.records.length;
    this.schedule();
    return this.queuedRecords > this.opts.capacity ? this.room() : undefined;
  }

  private async room(): Promise<void> {
    while (this.queuedRecords > this.opts.capacity) {
      await new Promise<void>(resolve => this.waiters.push(resolve));
    }
  }

  /** Resolves when nothing is queued or in flight for the owner's stream (committed or failed). */
  async settled(streamId: string): Promise<void> {
    const mine = (i: SinkItem) => i.owner.streamId === streamId;
    while (this.queue.some(mine) || this.inFlight.some(b => b.items.some(mine))) {
      this.schedule();
      await new Promise<void>(resolve => this.settledWaiters.push(resolve));
    }
  }

  private schedule(): void {
    if (this.timer && this.queuedRecords >= this.opts.maxBatch) {
      clearTimeout(this.timer);
      this.timer = null;
      this.scheduled = false;
    }
    if (this.scheduled) return;
    this.scheduled = true;
    // Each commit pays a WAL write of every page it touches and an fsync on the event loop; at a few
    // hundred events a second, one commit per event cost 30% more CPU per event (docs/benchmarks.md,
    // scale). A full batch does not wait.
    const wait = this.lastCommitAt + this.cadenceMs - Date.now();
    if (wait > 0 && this.queuedRecords < this.opts.maxBatch) {
      this.timer = setTimeout(() => {
        this.timer = null;
        this.scheduled = false;
        this.flush();
      }, wait);
      return;
    }
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  /** Commits up to maxBatch queued records now. */
  flush(): void {
    if (this.refused) return;
    // The journal plans the next batch while its writer thread commits the last; more in flight
    // would only queue there. The batch that settles schedules the next flush.
    if (this.inFlight.length >= IN_FLIGHT) return;
    const take: SinkItem[] = [];
    let n = 0;
    while (this.queue.length > 0 && (take.length === 0 || n < this.opts.maxBatch)) {
      const it = this.queue.shift()!;
      this.queuedRecords -= it.records.length;
      if (it.epoch !== it.owner.epoch) continue;
      take.push(it);
      n += it.records.length;
    }
    if (take.length > 0) {
      this.lastCommitAt = Date.now();
      this.commit(take);
    }
    for (const w of this.waiters.splice(0)) w();
    for (const w of this.settledWaiters.splice(0)) w();
    if (this.queue.length > 0) this.schedule();
  }

  private commit(items: SinkItem[]): void {
    const entry = { items, answered: false, err: null as unknown };
    this.inFlight.push(entry);
    const answer = (err: unknown) => {
      entry.answered = true;
      entry.err = err;
      this.report();
    };
    this.journal
      .appendAsync(
        this.batchOf(
          items.flatMap(i => i.records),
          checkpointsOf(items),
          items,
        ),
      )
      .then(
        () => answer(null),
        (err: unknown) => answer(err ?? new Error("append failed")),
      );
  }

  /**
   * Reports answered batches in the order they were appended. A refusal can be answered before an
   * earlier batch's commit is (it fails while being planned), and a stream must hear of its items
   * in order.
   */
  private report(): void {
    while (this.inFlight.length > 0 && this.inFlight[0].answered) {
      const { items, err } = this.inFlight.shift()!;
      if (this.refused) continue;
      if (err === null) this.done(items);
      else if (!isRecordFault(err)) this.fail(items, err, items);
      // One record (or checkpoint) the journal refuses must not stall every stream in the batch:
      // commit the rest without it (isolate), and fail only an owner whose own item cannot be saved.
      else this.isolate(items);
    }
    for (const w of this.settledWaiters.splice(0)) w();
    if (this.queue.length > 0) this.schedule();
  }

  private append(records: JournalRecord[], checkpoints: Map<string, string>, items: SinkItem[]) {
    this.journal.append(this.batchOf(records, checkpoints, items));
  }

  private batchOf(
    records: JournalRecord[],
    checkpoints: Map<string, string>,
    items: SinkItem[],
  ): AppendBatch {
    const observedAt = new Date().toISOString();
    const streams = new Map<string, StreamKey>();
    for (const it of items) streams.set(it.owner.streamId, it.owner.key);
    const batch: AppendBatch = {
      records,
      checkpoints: [...checkpoints].map(([streamId, resourceVersion]) => ({
        streamId,
        resourceVersion,
        observedAt,
      })),
      streams: [...streams.values()],
    };
    return batch;
  }

  private done(items: SinkItem[]): void {
    const now = Date.now();
    for (const it of items) it.owner.committed(it, now);
    this.hooks.onCommit?.(items, now);
  }

  private fail(items: SinkItem[], err: unknown, all: SinkItem[]): void {
    const n = all.reduce((sum, i) => sum + i.records.length, 0);
    const e = new SinkError(`journal append of ${n} records failed`, { cause: err });
    this.hooks.onError?.(e);
    for (const o of new Set(items.map(i => i.owner))) o.failed(e);
  }

  /** Commits the items in halves, then one by one; a failing item is isolated record by record. */
  private isolate(items: SinkItem[]): void {
    // The whole batch just failed, so the first try is its halves (or, alone, its records).
    const mid = items.length >> 1;
    const groups: SinkItem[][] = items.length > 1 ? [items.slice(0, mid), items.slice(mid)] : [];
    if (items.length === 1) groups.push(items);
    while (groups.length > 0) {
      const group = groups.shift()!;
      try {
        this.append(
          group.flatMap(i => i.records),
          checkpointsOf(group),
          group,
        );
        this.done(group);
        continue;
      } catch (err) {
        if (!isRecordFault(err)) {
          // The file or the disk failed: nothing more commits now; every item not yet saved fails.
          const left = [group, ...groups].flat();
          return this.fail(left, err, left);
        }
        if (group.length > 1) {
          const mid = group.length >> 1;
          groups.unshift(group.slice(0, mid), group.slice(mid));
          continue;
        }
      }
      const it = group[0];
      try {
        this.isolateItem(it);
        this.done([it]);
      } catch (err) {
        if (!isRecordFault(err)) {
          const left = [group, ...groups].flat();
          return this.fail(left, err, left);
        }
        this.fail([it], err, [it]);
      }
    }
  }

  /**
   * Saves one item the journal refused as a whole: its records without its checkpoint, halving until
   * each refused record is alone, which is then stored as an error record (plus a checkpoint record of
   * its resourceVersion, so the stream's position stays provable); then the checkpoint on its own.
   * Throws when even that fails, or when the checkpoint itself is what the journal refuses.
   */
  private isolateItem(it: SinkItem): void {
    const none = new Map<string, string>();
    const runs: JournalRecord[][] = [it.records];
    while (runs.length > 0) {
      const run = runs.shift()!;
      if (run.length === 0) continue;
      try {
        this.append(run, none, [it]);
        continue;
      } catch (err) {
        if (!isRecordFault(err)) throw err;
        if (run.length > 1) {
          const mid = run.length >> 1;
          runs.unshift(run.slice(0, mid), run.slice(mid));
          continue;
        }
        this.append(replacementOf(it.owner.key, run[0], err), none, [it]);
        this.hooks.onRejected?.(run[0], err);
      }
    }
    if (it.checkpointRv !== undefined) {
      this.append([], new Map([[it.owner.streamId, it.checkpointRv]]), [it]);
    }
  }
}

/** The checkpoint of each owner: its last item's, in push order. */
function checkpointsOf(items: SinkItem[]): Map<string, string> {
  const cps = new Map<string, string>();
  for (const it of items)
    if (it.checkpointRv !== undefined) cps.set(it.owner.streamId, it.checkpointRv);
  return cps;
}

/**
 * What is stored in place of a record the journal refused: an ERROR event carrying a Status that
 * names the object, its resourceVersion and why, written by krply (synthetic), and a checkpoint
 * record at that resourceVersion so the stream's position after it stays durable.
 */
export function replacementOf(key: StreamKey, rec: JournalRecord, err: unknown): JournalRecord[] {
  const why = err instanceof Error ? err.message : String(err);
  const r = rec.resource;
  const what = r
    ? `${r.kind} ${r.namespace ? `${r.namespace}/` : ""}${r.name} at resourceVersion ${r.resourceVersion}`
    : `a ${rec.type} record`;
  const error = eventRecord({
    stream: key,
    watchType: "ERROR",
    observedAt:
      rec.observedAt && !Number.isNaN(Date.parse(rec.observedAt))
        ? rec.observedAt
        : new Date().toISOString(),
    object: {
      apiVersion: "v1",
      kind: "Status",
      metadata: {},
      status: "Failure",
      reason: "KrplyRecordRejected",
      code: 500,
      message: `krply could not store ${what} (record ${rec.eventId}): ${why}; this version is missing from the history`,
      details: r ? { name: r.name, group: r.group, kind: r.kind, uid: r.uid } : undefined,
    },
  });
  error.synthetic = true;
  const out = [error];
  const rv = r?.resourceVersion ?? rec.checkpoint?.resourceVersion;
  if (rv) {
    out.push(
      checkpointRecord({
        stream: key,
        resourceVersion: rv,
        observedAt: error.observedAt,
        bookmark: false,
      }),
    );
  }
  return out;
}
