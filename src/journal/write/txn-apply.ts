// The writer thread's side of a packed transaction: the layout is described in txn-format.ts.
import * as L from "./txn-format";
import type { TxnExpect, TxnOps } from "./txn-format";

/** The expectations a packed transaction carries. */
export function readExpect(data: ArrayBuffer): TxnExpect {
  check(data);
  const f = new Float64Array(data, 0, 3);
  return { lastSeq: f[0], maxObjectId: f[1], maxStreamId: f[2] };
}

function check(data: ArrayBuffer): void {
  if (data.byteLength < L.HEADER || data.byteLength % 8 !== 0)
    throw new Error(`not a packed transaction (${data.byteLength} bytes)`);
  if (new Uint32Array(data, 0, 8)[7] !== L.MAGIC) throw new Error("not a packed transaction");
}

const nullable = (v: number): number | null => (Number.isNaN(v) ? null : v);

/** Replays a packed transaction's ops, in the order they were packed, onto `to`. */
export function applyTxn(data: ArrayBuffer, to: TxnOps): void {
  check(data);
  const buf = Buffer.from(data);
  const f = new Float64Array(data);
  const u = new Uint32Array(data);
  const count = u[6];
  let o = L.HEADER;
  const text = (p: number, n: number): string => buf.toString("utf8", p, p + n);
  const bytes = (p: number, n: number): Buffer => buf.subarray(p, p + n);
  for (let i = 0; i < count; i++) {
    if (o >= buf.length) throw new Error("packed transaction ends early");
    const tag = buf[o];
    if (tag === L.RECORD || tag === L.CONTROL) {
      const bits = buf[o + 1];
      const w = (o >> 3) + 1;
      const q = (o + 72) >> 2;
      let p = o + L.RECORD_FIXED;
      const idLen = u[(o >> 2) + 1];
      const id = bits & L.ID_BLOB ? bytes(p, idLen) : text(p, idLen);
      p += idLen;
      const hash = bits & L.HASH_NULL ? null : bits & L.HASH_BLOB ? bytes(p, u[q]) : text(p, u[q]);
      p += u[q];
      const rv = bits & L.RV_NULL ? null : text(p, u[q + 1]);
      p += u[q + 1];
      const meta = bits & L.META_NULL ? null : text(p, u[q + 2]);
      p += u[q + 2];
      const body = bits & L.BODY_NULL ? null : bytes(p, u[q + 3]);
      p += u[q + 3];
      if (p > buf.length) throw new Error("packed transaction ends early");
      (tag === L.RECORD ? to.record : to.control).call(
        to,
        f[w],
        id,
        f[w + 1],
        f[w + 2],
        nullable(f[w + 3]),
        f[w + 4],
        nullable(f[w + 5]),
        rv,
        f[w + 6],
        hash,
        meta,
        body,
        nullable(f[w + 7]),
      );
      o = L.align8(p);
      continue;
    }
    let p = o + 8;
    const num = (): number => {
      p = L.align8(p);
      const v = f[p >> 3];
      p += 8;
      return v;
    };
    const str = (): string => {
      p = (p + 3) & ~3;
      const n = u[p >> 2];
      const s = text(p + 4, n);
      p += 4 + n;
      return s;
    };
    switch (tag) {
      case L.ADVANCE:
        to.advance(str(), str(), num());
        break;
      case L.BASELINE_DONE:
        to.baselineDone(num(), num());
        break;
      case L.SET_STATE:
        to.setState(str(), num());
        break;
      case L.LAST_SEQ:
        to.lastSeq(str());
        break;
      case L.BUCKET_TIME:
        to.bucketTime(num(), num());
        break;
      case L.INSERT_OBJECT:
        to.insertObject(num(), str(), str(), str(), str(), str());
        break;
      case L.INSERT_STREAM:
        to.insertStream(num(), str(), str(), str(), str(), str(), str(), str());
        break;
      case L.LEASE_RENEW:
        to.leaseRenew(str(), str(), str());
        break;
      default:
        throw new Error(`unknown op ${String(tag)} in a packed transaction`);
    }
    if (p > buf.length) throw new Error("packed transaction ends early");
    o = L.align8(p);
  }
}
