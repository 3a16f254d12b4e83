// The main thread's side of a packed transaction: the layout is described in txn-format.ts.
import * as L from "./txn-format";
import type { RecordRow, TxnExpect, TxnOps } from "./txn-format";

/** Packs one transaction at a time into a reused, growing buffer. */
export class TxnBuilder implements TxnOps {
  private ab: ArrayBuffer;
  private buf: Buffer;
  private f64: Float64Array;
  private u32: Uint32Array;
  private off = L.HEADER;
  private ops = 0;
  private records = 0;

  constructor(initialBytes = 1 << 16) {
    this.ab = new ArrayBuffer(L.align8(Math.max(initialBytes, 256)));
    this.buf = Buffer.from(this.ab);
    this.f64 = new Float64Array(this.ab);
    this.u32 = new Uint32Array(this.ab);
  }

  /** Starts a new transaction (dropping whatever was packed since the last reset). */
  reset(expect: TxnExpect): void {
    this.off = L.HEADER;
    this.ops = 0;
    this.records = 0;
    this.f64[0] = expect.lastSeq;
    this.f64[1] = expect.maxObjectId;
    this.f64[2] = expect.maxStreamId;
  }

  /** Rows (records and control) packed since the last reset. */
  get rows(): number {
    return this.records;
  }

  /** Bytes packed since the last reset, header included: what finish() returns. */
  get bytes(): number {
    return this.off;
  }

  /** A fresh buffer holding the transaction, for transfer to the writer thread. */
  finish(): ArrayBuffer {
    this.u32[6] = this.ops;
    this.u32[7] = L.MAGIC;
    return this.ab.slice(0, this.off);
  }

  // The other ops are rare (a few per transaction): their values go through one array each.
  readonly advance: TxnOps["advance"] = (...v) => this.op(L.ADVANCE, v);
  readonly baselineDone: TxnOps["baselineDone"] = (...v) => this.op(L.BASELINE_DONE, v);
  readonly setState: TxnOps["setState"] = (...v) => this.op(L.SET_STATE, v);
  readonly lastSeq: TxnOps["lastSeq"] = (...v) => this.op(L.LAST_SEQ, v);
  readonly bucketTime: TxnOps["bucketTime"] = (...v) => this.op(L.BUCKET_TIME, v);
  readonly insertObject: TxnOps["insertObject"] = (...v) => this.op(L.INSERT_OBJECT, v);
  readonly insertStream: TxnOps["insertStream"] = (...v) => this.op(L.INSERT_STREAM, v);
  readonly leaseRenew: TxnOps["leaseRenew"] = (...v) => this.op(L.LEASE_RENEW, v);

  /** Makes room for n more bytes (plus alignment) after the current offset. */
  private room(n: number): void {
    const need = this.off + n + 8;
    if (need <= this.ab.byteLength) return;
    const next = new ArrayBuffer(L.align8(Math.max(this.ab.byteLength * 2, need)));
    new Uint8Array(next).set(new Uint8Array(this.ab, 0, this.off));
    this.ab = next;
    this.buf = Buffer.from(next);
    this.f64 = new Float64Array(next);
    this.u32 = new Uint32Array(next);
  }

  // A UTF-16 code unit takes at most 3 bytes of UTF-8 (a surrogate pair 4 for 2 units).
  private static maxBytes(v: Buffer | string | null): number {
    return v === null ? 0 : typeof v === "string" ? 3 * v.length : v.length;
  }

  /** Writes a string or blob at p; returns its byte count. Short ASCII (ids, rvs) skips the native call. */
  private put(v: Buffer | string, p: number): number {
    if (typeof v !== "string") {
      this.buf.set(v, p);
      return v.length;
    }
    const n = v.length;
    if (n <= 40) {
      const b = this.buf;
      let i = 0;
      for (; i < n; i++) {
        const c = v.charCodeAt(i);
        if (c >= 0x80) break;
        b[p + i] = c;
      }
      if (i === n) return n;
    }
    return this.buf.write(v, p, "utf8");
  }

  /**
   * Packs a records row; record() and control() are this, bound to their tag. An arrow typed by
   * RecordRow: its parameters are plain ones, so no row pays for an array of its values.
   */
  private readonly row: (tag: number, ...row: RecordRow) => void = (
    tag,
    seq,
    id,
    type,
    stream,
    object,
    ms,
    watch,
    rv,
    flags,
    hash,
    meta,
    body,
    base,
  ) => {
    this.room(
      L.RECORD_FIXED +
        TxnBuilder.maxBytes(id) +
        TxnBuilder.maxBytes(hash) +
        TxnBuilder.maxBytes(rv) +
        TxnBuilder.maxBytes(meta) +
        TxnBuilder.maxBytes(body),
    );
    const o = this.off;
    const f = this.f64;
    const u = this.u32;
    const w = (o >> 3) + 1;
    f[w] = seq;
    f[w + 1] = type;
    f[w + 2] = stream;
    f[w + 3] = object ?? NaN;
    f[w + 4] = ms;
    f[w + 5] = watch ?? NaN;
    f[w + 6] = flags;
    f[w + 7] = base ?? NaN;
    let bits = typeof id === "string" ? 0 : L.ID_BLOB;
    let p = o + L.RECORD_FIXED;
    let n = this.put(id, p);
    u[(o >> 2) + 1] = n;
    p += n;
    const q = (o + 72) >> 2;
    if (hash === null) {
      bits |= L.HASH_NULL;
      n = 0;
    } else {
      if (typeof hash !== "string") bits |= L.HASH_BLOB;
      n = this.put(hash, p);
    }
    u[q] = n;
    p += n;
    if (rv === null) {
      bits |= L.RV_NULL;
      n = 0;
    } else n = this.put(rv, p);
    u[q + 1] = n;
    p += n;
    if (meta === null) {
      bits |= L.META_NULL;
      n = 0;
    } else n = this.buf.write(meta, p, "utf8");
    u[q + 2] = n;
    p += n;
    if (body === null) {
      bits |= L.BODY_NULL;
      n = 0;
    } else n = this.put(body, p);
    u[q + 3] = n;
    p += n;
    this.buf[o] = tag;
    this.buf[o + 1] = bits;
    this.off = L.align8(p);
    this.ops++;
    this.records++;
  };

  readonly record: TxnOps["record"] = this.row.bind(null, L.RECORD);
  readonly control: TxnOps["control"] = this.row.bind(null, L.CONTROL);

  private op(tag: number, fields: (string | number)[]): void {
    let size = 8;
    // An aligned f64 takes up to 15 bytes, an aligned length and its string up to 7 + 3 per unit.
    for (const v of fields) size += 16 + (typeof v === "string" ? 3 * v.length : 0);
    this.room(size);
    const o = this.off;
    this.buf[o] = tag;
    let p = o + 8;
    for (const v of fields) {
      if (typeof v === "number") {
        p = L.align8(p);
        this.f64[p >> 3] = v;
        p += 8;
      } else {
        p = (p + 3) & ~3;
        const n = this.buf.write(v, p + 4, "utf8");
        this.u32[p >> 2] = n;
        p += 4 + n;
      }
    }
    this.off = L.align8(p);
    this.ops++;
  }
}
