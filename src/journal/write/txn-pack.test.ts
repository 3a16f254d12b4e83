import { applyTxn, readExpect } from "./txn-apply";
import type { RecordRow, TxnOps } from "./txn-format";
import { TxnBuilder } from "./txn-pack";

/** Logs every op applyTxn replays, with its arguments as decoded. */
function recorder(): { ops: TxnOps; calls: unknown[][] } {
  const calls: unknown[][] = [];
  const log =
    (name: string) =>
    (...args: unknown[]) =>
      calls.push([name, ...args]);
  const ops: TxnOps = {
    record: log("record"),
    control: log("control"),
    advance: log("advance"),
    baselineDone: log("baselineDone"),
    setState: log("setState"),
    lastSeq: log("lastSeq"),
    bucketTime: log("bucketTime"),
    insertObject: log("insertObject"),
    insertStream: log("insertStream"),
    leaseRenew: log("leaseRenew"),
  };
  return { ops, calls };
}

const packedId = Buffer.from("0123456789abcdef0123456789abcdef", "hex");
const bigBody = Buffer.alloc(70_000, 7); // past the initial buffer: the builder must grow mid-row

// Every kind of value each column takes: packed and text ids, 16- and 8-byte hashes, text hashes,
// nulls everywhere they are allowed, an empty body (a blob, not null), non-ASCII text.
const rows: RecordRow[] = [
  [
    1,
    packedId,
    3,
    1,
    7,
    1_700_000_000_123,
    1,
    "12345",
    0x21,
    Buffer.alloc(16, 0xab),
    null,
    Buffer.from("patch"),
    1,
  ],
  [
    2,
    "not-a-hex-id",
    4,
    2,
    null,
    1_700_000_000_124,
    null,
    null,
    0,
    null,
    '{"g":{"reason":"é ✓ 🚀"}}',
    null,
    null,
  ],
  [
    3,
    Buffer.alloc(16, 1),
    3,
    1,
    8,
    0,
    0,
    "rv-ü-ß-日本",
    2,
    Buffer.alloc(8, 0xcd),
    '{"o":"x"}',
    Buffer.alloc(0),
    null,
  ],
  [4, "", 5, 1, null, -1, 2, "", 0, "not-hex-hash", "", bigBody, 2 ** 52],
];

// Every op, in the order packed; replaying must call the same ops with the same values.
const expected: [keyof TxnOps, ...unknown[]][] = [
  [
    "insertStream",
    1,
    "test/apps/v1/deployments/shop",
    "test",
    "apps",
    "v1",
    "deployments",
    "shop",
    "",
  ],
  ["insertStream", 2, "*", "*", "", "", "", "", ""],
  ["insertObject", 7, "test", "Deployment", "shop", "web", "apps"],
  ["insertObject", 8, "tést", "ConfigMap", "ns-日本", "名前", ""],
  ["record", ...rows[0]],
  ["control", ...rows[1]],
  ["record", ...rows[2]],
  ["control", ...rows[3]],
  ["baselineDone", 3, 1],
  ["setState", "degraded", 2],
  ["advance", "12345", "2023-11-14T22:13:20.123Z", 1],
  ["bucketTime", 0, 1_700_000_000_123],
  ["lastSeq", "4"],
  ["leaseRenew", "recorder_lease", "inst-1", '{"instance":"inst-1","host":"hôte"}'],
];

function pack(b: TxnBuilder): void {
  b.reset({ lastSeq: 0, maxObjectId: 6, maxStreamId: 0 });
  for (const [name, ...args] of expected) (b[name] as (...a: unknown[]) => void)(...args);
}

describe("packed transactions", () => {
  it("replays every op with its values and their types (blob vs text, null vs value)", () => {
    const b = new TxnBuilder(1024);
    pack(b);
    expect(b.rows).toBe(4);
    const data = b.finish();
    expect(data.byteLength).toBe(b.bytes);
    expect(readExpect(data)).toEqual({ lastSeq: 0, maxObjectId: 6, maxStreamId: 0 });
    const { ops, calls } = recorder();
    applyTxn(data, ops);
    expect(calls).toEqual(expected);
    // toEqual treats a Buffer and a string as different; say so for the ids and hashes outright.
    expect(
      calls.map(c =>
        c[0] === "record" || c[0] === "control" ? [typeof c[2], typeof c[10]] : null,
      ),
    ).toEqual([
      null,
      null,
      null,
      null,
      ["object", "object"],
      ["string", "object"],
      ["object", "object"],
      ["string", "string"],
      null,
      null,
      null,
      null,
      null,
      null,
    ]);
  });

  it("re-packs what it replays into the same bytes", () => {
    const a = new TxnBuilder(256);
    pack(a);
    const first = a.finish();
    const b = new TxnBuilder();
    b.reset(readExpect(first));
    applyTxn(first, b);
    expect(Buffer.from(b.finish())).toEqual(Buffer.from(first));
  });

  it("hands out a copy, so packing the next transaction leaves a sent one intact", () => {
    const b = new TxnBuilder(256);
    pack(b);
    const sent = b.finish();
    const copy = Buffer.from(sent.slice(0));
    b.reset({ lastSeq: 4, maxObjectId: 8, maxStreamId: 2 });
    b.record(5, packedId, 3, 1, 7, 5, 1, "9", 0, null, null, Buffer.alloc(100, 9), null);
    const next = b.finish();
    expect(b.rows).toBe(1);
    expect(Buffer.from(sent)).toEqual(copy);
    const { ops, calls } = recorder();
    applyTxn(next, ops);
    expect(calls).toEqual([
      ["record", 5, packedId, 3, 1, 7, 5, 1, "9", 0, null, null, Buffer.alloc(100, 9), null],
    ]);
    expect(readExpect(next)).toEqual({ lastSeq: 4, maxObjectId: 8, maxStreamId: 2 });
  });

  it("packs an empty transaction", () => {
    const b = new TxnBuilder();
    b.reset({ lastSeq: 10, maxObjectId: 0, maxStreamId: 3 });
    const data = b.finish();
    const { ops, calls } = recorder();
    applyTxn(data, ops);
    expect(calls).toEqual([]);
    expect(readExpect(data).lastSeq).toBe(10);
  });

  it("refuses a buffer that is not a packed transaction, or one cut short", () => {
    const { ops } = recorder();
    expect(() => applyTxn(new ArrayBuffer(64), ops)).toThrow("not a packed transaction");
    expect(() => readExpect(new ArrayBuffer(8))).toThrow("not a packed transaction");
    const b = new TxnBuilder();
    pack(b);
    const whole = b.finish();
    expect(() => applyTxn(whole.slice(0, 200), ops)).toThrow("ends early");
  });
});
