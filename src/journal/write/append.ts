import { streamIdOf } from "../../event";
import type { CachedVersion, LruCache } from "../store/cache";
import type { KeyframeTable } from "../store/keyframe-table";
import type { KeptBody, KeyframeBodies } from "../store/keyframe-bodies";
import type { DedupWindow } from "./dedup";
import {
  encodeKeyframe,
  encodeObject,
  keyframeText,
  type CodecOptions,
  type EncodedBody,
} from "../codec/codec";
import type { RedactPolicy } from "./redact";
import { packHex, packId, typeCode, watchCode, type Meta } from "../store/rows";
import { checkIds, rowOf } from "./row-of";
import { OBJECT_BUCKET_SHIFT } from "../store/schema";
import type { TxnWrites } from "./txn-writes";
import type { Store } from "../store/store";
import { JournalError, type AppendBatch, type AppendResult } from "../types";

export interface WriterState {
  store: Store;
  cache: LruCache<number, CachedVersion>;
  /** The keyframe position of every object stored since the writer opened (or last forgot). */
  positions: KeyframeTable;
  /** Current keyframe bodies as stored, by object id: what a miss of `cache` decodes before reading disk. */
  bodies: KeyframeBodies;
  policy: RedactPolicy;
  codec: CodecOptions;
  /** Ids of the newest object records, so a new record rarely needs a look-up to rule out a copy. */
  ids: DedupWindow;
  nextSeq: number;
  duplicates: number;
  /**
   * Keyframes of batches planned but not yet committed (pipelined appends), oldest first: until
   * their batch commits, the file cannot give them back after the object cache lets one go.
   */
  unsaved?: Map<number, CachedVersion>[];
}

// Scratch space for packed ids and hashes that are only bound to statements and read by the id
// filter, never kept: SQLite copies bound blobs, so one buffer each serves every record.
const scratchId = Buffer.alloc(16);
const scratchHash = Buffer.alloc(16);
const scratchShortHash = Buffer.alloc(8);

/** Whether meta has no fields (without building a key array per record). */
function isEmpty(meta: Meta): boolean {
  for (const _k in meta) return false;
  return true;
}

/** Runs inside the caller's transaction; returns cache updates to apply only once it commits. */
export function appendInTxn(
  w: WriterState,
  x: TxnWrites,
  batch: AppendBatch,
): {
  result: AppendResult;
  pending: Map<number, CachedVersion>;
  /**
   * Bodies of the keyframes stored for objects, for the tier of bodies once the batch commits. A map
   * of its own beside `pending`, which goes into the object cache: that cache must not hold bodies,
   * and the patches (nearly every version) add nothing here.
   */
  keyframes: Map<number, KeptBody>;
  /** Stream rows whose checkpoint moved to a record at or after the seq: applied once it commits. */
  resumes: [number, number][];
  nextSeq: number;
  duplicates: number;
} {
  const pending = new Map<number, CachedVersion>();
  const keyframes = new Map<number, KeptBody>();
  const resumes: [number, number][] = [];
  let seq = w.nextSeq;
  let duplicates = 0;
  let firstSeq: number | null = null;
  // Stream row and rv of each stored record that has an rv, for checking the batch's checkpoints:
  // two arrays searched from the end (a checkpoint names its stream's last record), not a set per
  // stream that hashed every record's rv for the one or two look-ups a batch makes.
  const rvStreams: number[] = [];
  const rvs: string[] = [];
  // Earliest observation per index bucket among this batch's object rows (usually one bucket):
  // seqs only grow, so one bucket is open at a time.
  const bucketMins: [number, number][] = [];
  let bucket = -1;
  let bucketMin = 0;
  for (const rec of batch.streams ?? []) {
    w.store.registry.ensureStream(streamIdOf(rec), rec.clusterId);
  }
  for (const rec of batch.records) {
    checkIds(rec);
    const stream = w.store.registry.ensureStream(rec.streamId, rec.clusterId);
    const row = rowOf(rec, stream, w);
    const packedId = packId(rec.eventId, scratchId);
    let objectId: number | null = null;
    let enc: EncodedBody | null = null;
    let base: CachedVersion | null = null;
    if (row.identity) {
      const exact = w.ids.needsExact(stream.id, seq);
      const r = row.identity;
      const { id, created } = w.store.registry.registerObject(
        rec.clusterId,
        r.group,
        r.kind,
        r.namespace,
        r.name,
      );
      objectId = id;
      if (
        !created &&
        (exact || w.ids.mayHave(packedId)) &&
        x.objectCopy(id, packedId, rec.eventId)
      ) {
        duplicates++;
        continue;
      }
      // A just-created identity has no versions, so skip the cache (and its miss count) and the read.
      base = created ? null : (pending.get(id) ?? w.cache.get(id) ?? baseFromDisk(w, id));
      enc = encodeObject(base, row.object, x.codec ?? w.codec, row.patchRv);
    } else if (row.object !== undefined) {
      enc = encodeKeyframe(row.object, x.codec ?? w.codec);
    } else if (rec.type === "audit_correlation") {
      if (x.auditCopy(stream.id, row.observedMs, packedId, rec.eventId)) {
        duplicates++;
        continue;
      }
    }
    const { rv, hash, meta, observedMs: ms } = row;

    const storedHash =
      hash === null
        ? null
        : (packHex(hash, hash.length === 32 ? scratchHash : scratchShortHash) ?? hash);
    const metaJson = isEmpty(meta) ? null : JSON.stringify(meta);
    const flags = row.flags | (enc?.enc ?? 0);
    const stored = x.row(
      objectId !== null,
      rec.eventId,
      seq,
      packedId,
      typeCode(rec.type),
      stream.id,
      objectId,
      ms,
      watchCode(rec.watchType),
      rv,
      flags,
      storedHash,
      metaJson,
      enc?.body ?? null,
      enc?.base ?? null,
    );
    if (!stored) {
      duplicates++;
      continue;
    }
    if (objectId !== null) {
      w.ids.add(packedId, seq);
      const k = seq >> OBJECT_BUCKET_SHIFT;
      if (k !== bucket) {
        if (bucket >= 0) bucketMins.push([bucket, bucketMin]);
        bucket = k;
        bucketMin = ms;
      } else if (ms < bucketMin) bucketMin = ms;
    }
    if (firstSeq === null) firstSeq = seq;
    if (rv !== null) {
      rvStreams.push(stream.id);
      rvs.push(rv);
    }
    if (objectId !== null && enc) {
      // A keyframe becomes the base of the versions after it; a patch only advances the count.
      pending.set(objectId, {
        seq: enc.base ?? seq,
        object: enc.base === null ? row.object : base!.object,
        chainLen: enc.chainLen,
        keyframeBytes: enc.keyframeBytes,
      });
      if (enc.base === null) keyframes.set(objectId, { seq, flags, body: enc.body });
    }
    if (row.effect === "baseline-done") x.baselineDone(seq, stream.id);
    else if (row.effect !== null) x.setState(row.effect, stream.id);
    seq++;
  }
  for (const cp of batch.checkpoints) {
    const stream = w.store.registry.streamsById.get(cp.streamId);
    if (!stream) throw new JournalError(`checkpoint for unknown stream ${cp.streamId}`, "INVALID");
    // A checkpoint may only name a position that a durable record (now or earlier) holds.
    const inBatch = storedInBatch(rvStreams, rvs, stream.id, cp.resourceVersion);
    if (!inBatch && !x.rvIsDurable(stream.id, cp.resourceVersion, w.nextSeq)) {
      throw new JournalError(
        `checkpoint ${cp.streamId}@${cp.resourceVersion} points past every durable record of that stream`,
        "INVALID",
      );
    }
    x.advance(cp.resourceVersion, cp.observedAt, stream.id);
    // A checkpoint on a record of this batch lies at or after its first seq; any other keeps its bound.
    if (inBatch) resumes.push([stream.id, w.nextSeq]);
  }
  if (bucket >= 0) bucketMins.push([bucket, bucketMin]);
  for (const [k, m] of bucketMins) x.bucketTime(k, m);
  if (seq !== w.nextSeq) x.lastSeq(String(seq - 1));
  const appended = seq - w.nextSeq;
  return {
    result: { appended, duplicates, firstSeq, lastSeq: firstSeq === null ? null : seq - 1 },
    pending,
    keyframes,
    resumes,
    nextSeq: seq,
    duplicates,
  };
}

/**
 * The keyframe to diff against after a cache miss: decoded from the tier of kept bodies when it holds
 * the body of the keyframe the remembered position names, else read from disk (by that position when
 * there is one), which keeps the body read in the tier.
 */
function baseFromDisk(w: WriterState, objectId: number): CachedVersion | null {
  const unsaved = w.unsaved;
  if (unsaved)
    for (let i = unsaved.length - 1; i >= 0; i--) {
      const v = unsaved[i].get(objectId);
      if (v) return v;
    }
  const known = w.positions.get(objectId);
  const kept = known ? w.bodies.get(objectId, known.seq) : undefined;
  if (known && kept) {
    // A literal with the fields in currentBase's order, so both kinds of base share one shape.
    return {
      object: JSON.parse(keyframeText(kept.flags, kept.body)),
      seq: known.seq,
      chainLen: known.chainLen,
      keyframeBytes: known.keyframeBytes,
    };
  }
  return w.store.versions.currentBase(objectId, known, w.bodies);
}

/** Whether a record this batch stored carries the stream row and rv (newest first). */
function storedInBatch(
  rvStreams: readonly number[],
  rvs: readonly string[],
  streamRow: number,
  rv: string,
): boolean {
  for (let i = rvs.length - 1; i >= 0; i--)
    if (rvStreams[i] === streamRow && rvs[i] === rv) return true;
  return false;
}
