// The writes of planned appends packed for the writer thread (writer-thread.ts), which runs each
// batch as one transaction on its own connection while this thread plans the next. Until a batch
// commits, this connection cannot see its rows, so the reads a plan needs (is this id a copy? does a
// durable record carry this rv?) look at the batches still in flight first, then at the file.
import type { CodecOptions } from "../codec/codec";
import type { IdentityRows } from "../store/registry";
import { AUDIT_CODE } from "../store/schema";
import type { Store } from "../store/store";
import type { TxnExpect } from "./txn-format";
import type { TxnBuilder } from "./txn-pack";
import { rvOnDisk, type TxnWrites, type WriterStatements } from "./txn-writes";

/** What one planned batch wrote that later plans must see before it commits. */
interface Planned {
  /** Event ids of its rows. */
  ids: Set<string>;
  /** Stream row and rv of each of its rows and checkpoints that carries an rv. */
  rvStreams: number[];
  rvs: string[];
}

/** Plans write into a TxnBuilder; reads see the batches planned but not yet committed. */
export class PackedWrites implements TxnWrites, IdentityRows {
  private readonly planned: Planned[] = [];
  private current: Planned | null = null;
  private lastObjectId = 0;
  private lastStreamId = 0;

  /** The writer's codec, with deflate left to the writer thread (ENC_PACK_LATER). */
  readonly codec: CodecOptions;

  constructor(
    private readonly st: WriterStatements,
    private readonly store: Store,
    private readonly builder: TxnBuilder,
    private readonly controlCopy: (packedId: Buffer | string) => boolean,
    codec: CodecOptions,
  ) {
    this.codec = { ...codec, packLater: true };
  }

  /** Reads the highest identity ids from the file: at start, and after a reset. */
  load(maxObjectId: number, maxStreamId: number): void {
    this.planned.length = 0;
    this.current = null;
    this.lastObjectId = maxObjectId;
    this.lastStreamId = maxStreamId;
  }

  /** Starts packing a batch planned on top of the file's state as `lastSeq` names it. */
  begin(lastSeq: number): void {
    const expect: TxnExpect = {
      lastSeq,
      maxObjectId: this.lastObjectId,
      maxStreamId: this.lastStreamId,
    };
    this.builder.reset(expect);
    this.current = { ids: new Set(), rvStreams: [], rvs: [] };
  }

  /** The packed batch; it stays visible to later plans until committed() or load(). */
  finish(): ArrayBuffer {
    if (this.current) this.planned.push(this.current);
    this.current = null;
    return this.builder.finish();
  }

  /** Drops what began() started after a plan failed. */
  abandon(): void {
    this.current = null;
  }

  /** The oldest batch in flight committed: the file shows its rows now. */
  committed(): void {
    this.planned.shift();
  }

  get lastIds(): { objectId: number; streamId: number } {
    return { objectId: this.lastObjectId, streamId: this.lastStreamId };
  }

  private inFlight(eventId: string): boolean {
    if (this.current?.ids.has(eventId)) return true;
    for (let i = this.planned.length - 1; i >= 0; i--)
      if (this.planned[i].ids.has(eventId)) return true;
    return false;
  }

  objectCopy(objectId: number, packedId: Buffer | string, eventId: string): boolean {
    if (this.inFlight(eventId)) return true;
    return (
      this.store.buckets.newest(Number.MAX_SAFE_INTEGER, b =>
        this.st.objectCopy.get(b, objectId, packedId),
      ) !== undefined
    );
  }

  auditCopy(
    streamRow: number,
    observedMs: number,
    packedId: Buffer | string,
    eventId: string,
  ): boolean {
    if (this.inFlight(eventId)) return true;
    return this.st.auditCopy.get(streamRow, observedMs, packedId) !== undefined;
  }

  row(
    objectRow: boolean,
    eventId: string,
    seq: number,
    packedId: Buffer | string,
    type: number,
    stream: number,
    object: number | null,
    observedMs: number,
    watch: number | null,
    rv: string | null,
    flags: number,
    hash: Buffer | string | null,
    meta: string | null,
    body: Buffer | null,
    base: number | null,
  ): boolean {
    const cur = this.current!;
    // Control rows rely on a unique index inline; here the copy must be ruled out before packing.
    if (!objectRow && type !== AUDIT_CODE && (this.inFlight(eventId) || this.controlCopy(packedId)))
      return false;
    // The two ops share one signature; the thread inserts a control row only where it is new.
    (objectRow ? this.builder.record : this.builder.control).call(
      this.builder,
      seq,
      packedId,
      type,
      stream,
      object,
      observedMs,
      watch,
      rv,
      flags,
      hash,
      meta,
      body,
      base,
    );
    cur.ids.add(eventId);
    if (rv !== null) {
      cur.rvStreams.push(stream);
      cur.rvs.push(rv);
    }
    return true;
  }

  advance(rv: string, observedAt: string, streamRow: number): void {
    this.builder.advance(rv, observedAt, streamRow);
    this.current!.rvStreams.push(streamRow);
    this.current!.rvs.push(rv);
  }

  baselineDone(seq: number, streamRow: number): void {
    this.builder.baselineDone(seq, streamRow);
  }

  setState(state: string, streamRow: number): void {
    this.builder.setState(state, streamRow);
  }

  lastSeq(value: string): void {
    this.builder.lastSeq(value);
  }

  bucketTime(k: number, minObserved: number): void {
    this.builder.bucketTime(k, minObserved);
  }

  rvIsDurable(streamRow: number, rv: string, nextSeq: number): boolean {
    // An rv of a batch still in flight becomes durable with it, and this batch commits after it.
    for (let i = this.planned.length - 1; i >= 0; i--) {
      const p = this.planned[i];
      for (let k = p.rvs.length - 1; k >= 0; k--)
        if (p.rvStreams[k] === streamRow && p.rvs[k] === rv) return true;
    }
    return rvOnDisk(this.st, streamRow, rv, nextSeq);
  }

  stream(
    streamId: string,
    clusterId: string,
    grp: string,
    version: string,
    resource: string,
    namespace: string,
    selector: string,
  ): number {
    const id = ++this.lastStreamId;
    this.builder.insertStream(id, streamId, clusterId, grp, version, resource, namespace, selector);
    return id;
  }

  object(clusterId: string, kind: string, namespace: string, name: string, grp: string): number {
    const id = ++this.lastObjectId;
    this.builder.insertObject(id, clusterId, kind, namespace, name, grp);
    return id;
  }
}
