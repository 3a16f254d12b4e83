import type { JournalRecord, StreamKey } from "../event";
import type { AppendBatch, Journal } from "../journal";
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
}

/**
 * A bounded FIFO in front of the journal. Streams push in order; a flush commits everything queued in
 * one transaction (group commit). A full queue makes push wait, which stops the caller reading its
 * socket, so a slow disk turns into TCP backpressure, never into memory.
 */
export class JournalSink {
  private queue: SinkItem[] = [];
  private queuedRecords = 0;
  private scheduled = false;
  private waiters: (() => void)[] = [];
  private settledWaiters: (() => void)[] = [];
  private refused = false;

  constructor(
    private readonly journal: Journal,
    private readonly opts: SinkOptions,
    private readonly hooks: {
      onCommit?: (items: SinkItem[], committedAt: number) => void;
      onError?: (err: SinkError) => void;
    } = {},
  ) {}

  /** Records waiting to be committed. */
  get depth(): number {
    return this.queuedRecords;
  }

  /** Drops everything queued and everything pushed from now on: the journal must not be written. */
  refuse(): void {
    this.refused = true;
    this.queue = [];
    this.queuedRecords = 0;
    for (const w of this.waiters.splice(0)) w();
    for (const w of this.settledWaiters.splice(0)) w();
  }

  /** Queues an item; resolves once the queue has room, not when the item is durable. */
  async push(item: SinkItem): Promise<void> {
    if (this.refused) return;
    this.queue.push(item);
    this.queuedRecords += item.records.length;
    this.schedule();
    while (this.queuedRecords > this.opts.capacity) {
      await new Promise<void>(resolve => this.waiters.push(resolve));
    }
  }

  /** Resolves when nothing is queued for the owner's stream (committed or failed). */
  async settled(streamId: string): Promise<void> {
    while (this.queue.some(i => i.owner.streamId === streamId)) {
      this.schedule();
      await new Promise<void>(resolve => this.settledWaiters.push(resolve));
    }
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  /** Commits up to maxBatch queued records now. */
  flush(): void {
    if (this.refused) return;
    const take: SinkItem[] = [];
    let n = 0;
    while (this.queue.length > 0 && (take.length === 0 || n < this.opts.maxBatch)) {
      const it = this.queue.shift()!;
      this.queuedRecords -= it.records.length;
      if (it.epoch !== it.owner.epoch) continue;
      take.push(it);
      n += it.records.length;
    }
    if (take.length > 0) this.commit(take);
    for (const w of this.waiters.splice(0)) w();
    for (const w of this.settledWaiters.splice(0)) w();
    if (this.queue.length > 0) this.schedule();
  }

  private commit(items: SinkItem[]): void {
    const records: JournalRecord[] = [];
    const cps = new Map<string, string>();
    const streams = new Map<string, StreamKey>();
    for (const it of items) {
      for (const r of it.records) records.push(r);
      if (it.checkpointRv !== undefined) cps.set(it.owner.streamId, it.checkpointRv);
      streams.set(it.owner.streamId, it.owner.key);
    }
    const observedAt = new Date().toISOString();
    const batch: AppendBatch = {
      records,
      checkpoints: [...cps].map(([streamId, resourceVersion]) => ({
        streamId,
        resourceVersion,
        observedAt,
      })),
      streams: [...streams.values()],
    };
    try {
      this.journal.append(batch);
    } catch (err) {
      const e = new SinkError(`journal append of ${records.length} records failed`, {
        cause: err,
      });
      const owners = new Set(items.map(i => i.owner));
      this.hooks.onError?.(e);
      for (const o of owners) o.failed(e);
      return;
    }
    const now = Date.now();
    for (const it of items) it.owner.committed(it, now);
    this.hooks.onCommit?.(items, now);
  }
}
