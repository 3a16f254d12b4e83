import Database from "better-sqlite3";
import { LEASE_KEY } from "./lease";
import { TxnBuilder } from "./txn-pack";
import {
  cmStream,
  codeOf,
  ev,
  fileState,
  rowsAfter,
  rowsTxn,
  useJournalFile,
} from "../../../test/support/writer-thread-fixtures";

describe("the journal's writer thread", () => {
  const f = useJournalFile();
  const b = new TxnBuilder();

  it("commits a packed transaction that another connection then reads back, values and types intact", async () => {
    const wt = f.start();
    const before = fileState(f.path);
    const stream = before.maxStreamId + 1;
    const object = before.maxObjectId + 1;
    const seq = before.lastSeq + 1;
    const packed = Buffer.from("00112233445566778899aabbccddeeff", "hex");
    b.reset(before);
    b.insertStream(stream, cmStream, "test", "", "v1", "configmaps", "kube-system", "");
    b.insertObject(object, "test", "ConfigMap", "kube-system", "naïve-名前", "");
    b.record(
      seq,
      packed,
      1,
      stream,
      object,
      1_700_000_000_001,
      0,
      "101",
      3,
      Buffer.alloc(16, 0xab),
      '{"o":"2023-11-14T22:13:20.001+00:00","x":"ü✓🚀"}',
      Buffer.from("body"),
      null,
    );
    b.control(
      seq + 1,
      "gap-1",
      4,
      stream,
      null,
      1_700_000_000_002,
      null,
      null,
      0,
      "short-hash",
      null,
      null,
      null,
    );
    b.record(
      seq + 2,
      Buffer.alloc(16, 2),
      1,
      stream,
      object,
      1_700_000_000_003,
      1,
      "rv-é",
      0,
      Buffer.alloc(8, 0xcd),
      null,
      Buffer.alloc(0),
      seq,
    );
    b.baselineDone(seq, stream);
    b.setState("degraded", 1);
    b.advance("101", "2023-11-14T22:13:20.001Z", stream);
    b.bucketTime(0, 1_700_000_000_001);
    b.lastSeq(String(seq + 2));
    await wt.submit(1, b.finish());

    expect(fileState(f.path)).toEqual({
      lastSeq: seq + 2,
      maxObjectId: object,
      maxStreamId: stream,
    });
    const rows = rowsAfter(f.path, before.lastSeq);
    expect(rows).toEqual([
      {
        seq,
        event_id: packed,
        type: 1,
        stream,
        object,
        observed_at: 1_700_000_000_001,
        watch: 0,
        rv: "101",
        flags: 3,
        hash: Buffer.alloc(16, 0xab),
        meta: '{"o":"2023-11-14T22:13:20.001+00:00","x":"ü✓🚀"}',
        body: Buffer.from("body"),
        base: null,
      },
      {
        seq: seq + 1,
        event_id: "gap-1",
        type: 4,
        stream,
        object: null,
        observed_at: 1_700_000_000_002,
        watch: null,
        rv: null,
        flags: 0,
        hash: "short-hash",
        meta: null,
        body: null,
        base: null,
      },
      {
        seq: seq + 2,
        event_id: Buffer.alloc(16, 2),
        type: 1,
        stream,
        object,
        observed_at: 1_700_000_000_003,
        watch: 1,
        rv: "rv-é",
        flags: 0,
        hash: Buffer.alloc(8, 0xcd),
        meta: null,
        body: Buffer.alloc(0),
        base: seq,
      },
    ]);
    const db = new Database(f.path, { readonly: true });
    try {
      // A blob id stays a blob and a text id text: SQLite never equates the two.
      expect(
        db
          .prepare(
            "SELECT typeof(event_id), typeof(hash), typeof(body) FROM records WHERE seq >= ? ORDER BY seq",
          )
          .raw()
          .all(seq),
      ).toEqual([
        ["blob", "blob", "blob"],
        ["text", "text", "null"],
        ["blob", "blob", "blob"],
      ]);
      expect(db.prepare("SELECT * FROM streams WHERE id=?").get(stream)).toEqual({
        id: stream,
        stream_id: cmStream,
        cluster_id: "test",
        grp: "",
        version: "v1",
        resource: "configmaps",
        namespace: "kube-system",
        selector: "",
        last_rv: "101",
        last_observed_at: "2023-11-14T22:13:20.001Z",
        last_baseline_seq: seq,
        state: "active",
      });
      expect(db.prepare("SELECT state FROM streams WHERE id=1").pluck().get()).toBe("degraded");
      expect(db.prepare("SELECT * FROM objects WHERE id=?").get(object)).toEqual({
        id: object,
        cluster_id: "test",
        kind: "ConfigMap",
        namespace: "kube-system",
        name: "naïve-名前",
        grp: "",
      });
      expect(
        db.prepare("SELECT min_observed FROM bucket_times WHERE k=0").pluck().get(),
      ).toBeLessThanOrEqual(1_700_000_000_001);
    } finally {
      db.close();
    }
    // The journal's own connection takes the rows in, and appends after them.
    expect(f.j.append({ records: [ev(3)], checkpoints: [] }).firstSeq).toBe(seq + 3);
  });

  it("refuses with OTHER_WRITER when another connection appended after the transaction was planned", async () => {
    const wt = f.start();
    const planned = fileState(f.path);
    const data = rowsTxn(b, planned, 3);
    f.j.append({ records: [ev(3)], checkpoints: [] });
    expect(await codeOf(wt.submit(1, data))).toBe("OTHER_WRITER");
    expect(rowsAfter(f.path, planned.lastSeq + 1)).toEqual([]);
    // A transaction planned on the file as it is now commits (a newer generation).
    await wt.submit(2, rowsTxn(b, fileState(f.path), 3));
    expect(rowsAfter(f.path, planned.lastSeq + 1)).toHaveLength(3);
  });

  it("fails with SQLITE_FULL when the file cannot grow, aborts the rest of that generation, runs the next", async () => {
    const db = new Database(f.path, { readonly: true });
    const pages = db.pragma("page_count", { simple: true }) as number;
    db.close();
    // The byte budget's cap (Retention's max_page_count), here at the file's current size.
    const wt = f.start({ pragmas: { max_page_count: pages } });
    const planned = fileState(f.path);
    const full = wt.submit(1, rowsTxn(b, planned, 4, 1 << 20, "big"));
    // Planned on top of the first: it must not run, even though it alone would fit.
    const next = wt.submit(
      1,
      rowsTxn(b, { ...planned, lastSeq: planned.lastSeq + 4 }, 1, 8, "small"),
    );
    const replanned = wt.submit(2, rowsTxn(b, planned, 1, 8, "replanned"));
    expect(await codeOf(full)).toBe("SQLITE_FULL");
    expect(await codeOf(next)).toBe("ABORTED");
    expect(await codeOf(replanned)).toBe("committed");
    expect(rowsAfter(f.path, planned.lastSeq).map(r => r.event_id)).toEqual([
      `replanned-${planned.lastSeq + 1}`,
    ]);
    // An older generation stays aborted after the newer one succeeded.
    expect(await codeOf(wt.submit(1, rowsTxn(b, fileState(f.path), 1, 8, "late")))).toBe("ABORTED");
    // A raised cap (the budget grew, or the prune made room) lets the big transaction in.
    await wt.pragma("max_page_count", pages + 1000);
    expect(await codeOf(wt.submit(3, rowsTxn(b, fileState(f.path), 4, 1 << 20, "big")))).toBe(
      "committed",
    );
    expect(await codeOf(wt.pragma("max_page_count; DROP TABLE records" as "cache_size", 1))).toBe(
      "INVALID",
    );
  });

  it("renews the lease only while meta still names this recorder, else LEASED and nothing is written", async () => {
    const wt = f.start();
    const lease = (instance: string, heartbeat: number) =>
      JSON.stringify({ host: "h", pid: 1, instance, since: 1, heartbeat });
    const renewTxn = (): ArrayBuffer => {
      const planned = fileState(f.path);
      b.reset(planned);
      b.leaseRenew(LEASE_KEY, "mine", lease("mine", 2));
      b.record(planned.lastSeq + 1, "leased-row", 1, 1, 1, 1, 1, "9", 0, null, null, null, null);
      return b.finish();
    };
    const meta = () => {
      const db = new Database(f.path, { readonly: true });
      try {
        return db.prepare("SELECT value FROM meta WHERE key=?").pluck().get(LEASE_KEY) as
          | string
          | undefined;
      } finally {
        db.close();
      }
    };
    const setLease = (value: string) => {
      const db = new Database(f.path);
      db.prepare("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)").run(LEASE_KEY, value);
      db.close();
    };
    const last = fileState(f.path).lastSeq;
    expect(await codeOf(wt.submit(1, renewTxn()))).toBe("LEASED"); // no lease row at all
    setLease(lease("theirs", 1));
    expect(await codeOf(wt.submit(2, renewTxn()))).toBe("LEASED");
    setLease("not json");
    expect(await codeOf(wt.submit(3, renewTxn()))).toBe("LEASED");
    expect(rowsAfter(f.path, last)).toEqual([]);
    setLease(lease("mine", 1));
    await wt.submit(4, renewTxn());
    expect(meta()).toBe(lease("mine", 2));
    expect(rowsAfter(f.path, last).map(r => r.event_id)).toEqual(["leased-row"]);
  });
});
