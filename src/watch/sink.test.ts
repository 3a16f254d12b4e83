import { eventRecord, streamIdOf, type JournalRecord, type StreamKey } from "../event";
import { JournalError, openJournal, type Journal } from "../journal";
import { at, configMap, streamKey, tempJournalPath } from "../../test/support/journal-fixtures";
import { SinkError } from "./decide";
import { JournalSink, type SinkItem, type SinkOptions, type SinkOwner } from "./sink";

/** A stream as the sink sees it: it keeps what the sink told it, and its epoch moves like a runner's. */
class Owner implements SinkOwner {
  readonly streamId: string;
  epoch = 0;
  readonly committedRvs: string[] = [];
  readonly failures: SinkError[] = [];

  constructor(readonly key: StreamKey) {
    this.streamId = streamIdOf(key);
  }

  committed(item: SinkItem): void {
    this.committedRvs.push(...item.records.map(r => r.resource!.resourceVersion));
  }

  failed(err: SinkError): void {
    this.failures.push(err);
  }
}

function cmEvent(key: StreamKey, name: string, rv: number): JournalRecord {
  return eventRecord({
    stream: key,
    watchType: "MODIFIED",
    object: configMap(name, key.namespace, `uid-${name}`, rv, { v: String(rv) }),
    observedAt: at(rv),
  });
}

/** One item per RV, each making its own RV durable, the way a runner pushes watch events. */
function item(owner: Owner, name: string, ...rvs: number[]): SinkItem {
  return {
    owner,
    epoch: owner.epoch,
    records: rvs.map(rv => cmEvent(owner.key, name, rv)),
    checkpointRv: String(rvs[rvs.length - 1]),
    receivedAt: 0,
  };
}

const eventRvs = (j: Journal, streamId?: string) =>
  j
    .events({ streamId })
    .records.filter(r => r.resource)
    .map(r => r.resource!.resourceVersion);

const checkpointOf = (j: Journal, streamId: string) =>
  j.streams().find(s => s.streamId === streamId)?.lastResourceVersion ?? null;

// Every case runs twice: appends on this thread, and pipelined over the journal's writer thread.
describe.each([
  ["inline", false],
  ["on the writer thread", true],
])("JournalSink (%s)", (_mode, writerThread) => {
  let tmp: ReturnType<typeof tempJournalPath>;
  let journal: Journal;
  let a: Owner;
  let b: Owner;
  let commits: SinkItem[][];
  let errors: SinkError[];

  const sinkWith = (opts: SinkOptions) =>
    new JournalSink(journal, opts, {
      onCommit: items => commits.push(items),
      onError: err => errors.push(err),
    });

  beforeEach(() => {
    tmp = tempJournalPath("krply-sink-");
    journal = openJournal(tmp.path, { sync: "NORMAL", writerThread });
    a = new Owner(streamKey("configmaps", "", "v1", "ns-a"));
    b = new Owner(streamKey("configmaps", "", "v1", "ns-b"));
    commits = [];
    errors = [];
  });
  afterEach(() => {
    try {
      journal.close();
    } catch {
      // A test may have closed it already.
    }
    tmp.cleanup();
  });

  describe("group commit", () => {
    it("commits everything queued in one transaction, with each stream's checkpoint", async () => {
      const sink = sinkWith({ capacity: 1000, maxBatch: 1000 });
      const pushes: Promise<void>[] = [];
      for (let rv = 1; rv <= 30; rv++) {
        const owner = rv % 3 === 0 ? b : a;
        pushes.push(Promise.resolve(sink.push(item(owner, `cm-${rv % 5}`, rv))));
      }
      await Promise.all(pushes);
      // Room in the queue is not durability: nothing is written before the flush runs.
      expect(eventRvs(journal)).toEqual([]);
      expect(sink.depth).toBe(30);
      await sink.settled(a.streamId);
      await sink.settled(b.streamId);

      expect(commits).toHaveLength(1);
      expect(commits[0]).toHaveLength(30);
      const all = Array.from({ length: 30 }, (_, i) => String(i + 1));
      expect(eventRvs(journal)).toEqual(all);
      expect(eventRvs(journal, b.streamId)).toEqual(all.filter(rv => Number(rv) % 3 === 0));
      expect(checkpointOf(journal, a.streamId)).toBe("29");
      expect(checkpointOf(journal, b.streamId)).toBe("30");
      expect(a.committedRvs).toEqual(all.filter(rv => Number(rv) % 3 !== 0));
      expect(b.committedRvs).toEqual(all.filter(rv => Number(rv) % 3 === 0));
      expect(errors).toEqual([]);
      expect(sink.depth).toBe(0);
    });

    it("splits a long queue into transactions of maxBatch records, in push order", async () => {
      const sink = sinkWith({ capacity: 1000, maxBatch: 10 });
      const pushes: Promise<void>[] = [];
      for (let rv = 1; rv <= 25; rv++) pushes.push(Promise.resolve(sink.push(item(a, "cm", rv))));
      await Promise.all(pushes);
      await sink.settled(a.streamId);

      expect(commits.map(c => c.length)).toEqual([10, 10, 5]);
      expect(eventRvs(journal)).toEqual(Array.from({ length: 25 }, (_, i) => String(i + 1)));
      expect(journal.events({}).records.map(r => r.ingestSeq)).toEqual(
        Array.from({ length: 25 }, (_, i) => i + 1),
      );
      expect(checkpointOf(journal, a.streamId)).toBe("25");
    });

    it("never splits one item: an item larger than maxBatch commits whole", async () => {
      const sink = sinkWith({ capacity: 1000, maxBatch: 2 });
      await sink.push(item(a, "cm", 1, 2, 3, 4, 5));
      await sink.push(item(a, "cm", 6));
      await sink.settled(a.streamId);
      expect(commits.map(c => c.flatMap(i => i.records).length)).toEqual([5, 1]);
      expect(eventRvs(journal)).toEqual(["1", "2", "3", "4", "5", "6"]);
    });
  });

  describe("backpressure", () => {
    it("holds a push while the queue is over capacity and releases it once a flush makes room", async () => {
      // capacity 3, two records per transaction: pushes 4-6 overfill the queue.
      const log: string[] = [];
      const sink = new JournalSink(
        journal,
        { capacity: 3, maxBatch: 2 },
        {
          onCommit: items =>
            log.push(`commit ${items.map(i => i.checkpointRv).join(",")} depth ${sink.depth}`),
        },
      );
      const pushes = [1, 2, 3, 4, 5, 6].map(rv =>
        Promise.resolve(sink.push(item(a, "cm", rv))).then(() => log.push(`push ${rv} resolved`)),
      );
      await Promise.all(pushes);
      await sink.settled(a.streamId);

      if (writerThread) {
        // Commits are reported once durable, while later flushes already made room: every push is
        // released, and the batches commit in push order.
        expect(log.filter(l => l.startsWith("push"))).toHaveLength(6);
        const committed = log.filter(l => l.startsWith("commit")).map(l => l.split(" ")[1]);
        expect(committed.join(",")).toBe("1,2,3,4,5,6");
      } else
        expect(log).toEqual([
          "push 1 resolved",
          "push 2 resolved",
          "push 3 resolved",
          // The first flush leaves 4 queued, still over capacity: nobody is released.
          "commit 1,2 depth 4",
          "commit 3,4 depth 2",
          "push 4 resolved",
          "push 5 resolved",
          "push 6 resolved",
          "commit 5,6 depth 0",
        ]);
      expect(eventRvs(journal)).toEqual(["1", "2", "3", "4", "5", "6"]);
    });

    it("hands back a promise only while the queue is over capacity", async () => {
      const sink = sinkWith({ capacity: 2, maxBatch: 100 });
      // With room, a push costs the stream no promise and no turn of the event loop.
      expect(sink.push(item(a, "cm", 1))).toBeUndefined();
      expect(sink.push(item(a, "cm", 2))).toBeUndefined();
      const full = sink.push(item(a, "cm", 3));
      expect(full).toBeInstanceOf(Promise);
      await full;
      await sink.settled(a.streamId);
      expect(eventRvs(journal)).toEqual(["1", "2", "3"]);
    });

    it("keeps a single item larger than the capacity waiting until it is committed", async () => {
      const sink = sinkWith({ capacity: 3, maxBatch: 100 });
      let resolved = false;
      const push = sink.push(item(a, "cm", 1, 2, 3, 4, 5))!.then(() => (resolved = true));
      // Microtasks and I/O callbacks run, but the flush (setImmediate) has not yet.
      await new Promise(r => process.nextTick(r));
      await Promise.resolve();
      expect(resolved).toBe(false);
      expect(sink.depth).toBe(5);
      expect(commits).toHaveLength(0);
      await push;
      // Inline, the flush that made room also made the records durable; pipelined, room is made
      // when they leave the queue for the writer thread, and they are durable once settled.
      if (writerThread) await sink.settled(a.streamId);
      expect(commits).toHaveLength(1);
      expect(eventRvs(journal)).toEqual(["1", "2", "3", "4", "5"]);
      expect(sink.depth).toBe(0);
    });
  });

  describe("stale epochs", () => {
    it("drops an item queued under an older epoch of its owner, records and checkpoint alike", async () => {
      const sink = sinkWith({ capacity: 100, maxBatch: 100 });
      await sink.push(item(a, "cm", 1));
      await sink.push(item(b, "cm", 2));
      // The runner's connection failed: what it queued before is void, what follows is new.
      a.epoch = 1;
      await sink.push(item(a, "cm", 3));
      expect(sink.depth).toBe(3);
      await sink.settled(a.streamId);
      await sink.settled(b.streamId);

      expect(eventRvs(journal, a.streamId)).toEqual(["3"]);
      expect(eventRvs(journal, b.streamId)).toEqual(["2"]);
      expect(a.committedRvs).toEqual(["3"]);
      expect(commits).toHaveLength(1);
      expect(commits[0].map(i => i.checkpointRv)).toEqual(["2", "3"]);
      expect(sink.depth).toBe(0);
    });

    it("writes nothing and calls no hook when every queued item is stale", async () => {
      const sink = sinkWith({ capacity: 100, maxBatch: 100 });
      await sink.push(item(a, "cm", 1));
      await sink.push(item(a, "cm", 2));
      a.epoch = 5;
      await sink.settled(a.streamId);

      expect(eventRvs(journal)).toEqual([]);
      expect(journal.streams()).toEqual([]);
      expect(commits).toEqual([]);
      expect(a.committedRvs).toEqual([]);
      expect(a.failures).toEqual([]);
      expect(sink.depth).toBe(0);
    });
  });

  describe("failure fan-out", () => {
    it("a checkpoint the journal refuses fails only its own stream; the rest of the batch commits", async () => {
      const sink = sinkWith({ capacity: 100, maxBatch: 100 });
      await sink.push(item(a, "cm", 1));
      await sink.push(item(b, "cm", 2));
      // A checkpoint past every durable record of b: the journal refuses it.
      await sink.push({ ...item(b, "cm", 3), checkpointRv: "999" });
      await sink.push(item(a, "cm", 4));
      await sink.settled(a.streamId);
      await sink.settled(b.streamId);

      expect(errors).toHaveLength(1);
      const err = errors[0];
      expect(err).toBeInstanceOf(SinkError);
      expect(err.cause).toBeInstanceOf(JournalError);
      expect((err.cause as JournalError).code).toBe("INVALID");
      expect((err.cause as JournalError).message).toMatch(/999 points past every durable record/);
      expect(a.failures).toEqual([]);
      expect(b.failures).toEqual([err]);
      expect(a.committedRvs).toEqual(["1", "4"]);
      expect(b.committedRvs).toEqual(["2"]);
      // b's record 3 is stored (nothing was wrong with it); its checkpoint stays at 2.
      expect(eventRvs(journal).sort()).toEqual(["1", "2", "3", "4"]);
      expect(checkpointOf(journal, a.streamId)).toBe("4");
      expect(checkpointOf(journal, b.streamId)).toBe("2");

      await sink.push(item(a, "cm", 5));
      await sink.push(item(b, "cm", 6));
      await sink.settled(a.streamId);
      await sink.settled(b.streamId);
      expect(checkpointOf(journal, a.streamId)).toBe("5");
      expect(checkpointOf(journal, b.streamId)).toBe("6");
      expect(errors).toHaveLength(1);
      expect(journal.fsck()).toMatchObject({ ok: true, problems: [] });
    });

    it("fails only the owners of the refused batch, not those committed before it", async () => {
      const sink = sinkWith({ capacity: 100, maxBatch: 1 });
      await sink.push(item(a, "cm", 1));
      await sink.push({ ...item(b, "cm", 2), checkpointRv: "999" });
      await sink.settled(b.streamId);

      expect(a.committedRvs).toEqual(["1"]);
      expect(a.failures).toEqual([]);
      expect(b.failures).toHaveLength(1);
      expect(errors).toEqual(b.failures);
      // b's record is durable, its checkpoint is not: b resumes from before it and the copy dedups.
      expect(eventRvs(journal)).toEqual(["1", "2"]);
      expect(checkpointOf(journal, b.streamId)).toBeNull();
    });

    it("fails every owner when the journal is closed underneath the sink", async () => {
      const sink = sinkWith({ capacity: 100, maxBatch: 100 });
      await sink.push(item(a, "cm", 1));
      await sink.push(item(b, "cm", 2));
      journal.close();
      await sink.settled(a.streamId);
      await sink.settled(b.streamId);

      expect(errors).toHaveLength(1);
      expect(errors[0].cause).toBeInstanceOf(JournalError);
      expect((errors[0].cause as JournalError).code).toBe("CLOSED");
      expect(a.failures).toEqual(errors);
      expect(b.failures).toEqual(errors);
      expect(commits).toEqual([]);

      const reopened = openJournal(tmp.path);
      try {
        expect(eventRvs(reopened)).toEqual([]);
      } finally {
        reopened.close();
      }
    });
  });

  describe("a record the journal refuses", () => {
    const badRecord = (owner: Owner, name: string, rv: number): JournalRecord => ({
      ...cmEvent(owner.key, name, rv),
      observedAt: "not a time",
    });

    it("is stored as an ERROR record in its place; every other stream, and its own, go on", async () => {
      const c = new Owner(streamKey("configmaps", "", "v1", "ns-c"));
      const rejected: JournalRecord[] = [];
      const sink = new JournalSink(
        journal,
        { capacity: 100, maxBatch: 100 },
        {
          onCommit: items => commits.push(items),
          onError: err => errors.push(err),
          onRejected: r => rejected.push(r),
        },
      );
      await sink.push(item(a, "cm", 1));
      await sink.push(item(b, "cm", 2));
      await sink.push({ ...item(c, "bad", 3), records: [badRecord(c, "bad", 3)] });
      await sink.push(item(a, "cm", 4));
      await sink.push(item(b, "cm", 5));
      for (const o of [a, b, c]) await sink.settled(o.streamId);

      // Nobody failed, so no stream reconnects; every good record and checkpoint is durable.
      expect([a.failures, b.failures, c.failures, errors]).toEqual([[], [], [], []]);
      expect(eventRvs(journal, a.streamId)).toEqual(["1", "4"]);
      expect(eventRvs(journal, b.streamId)).toEqual(["2", "5"]);
      expect(checkpointOf(journal, a.streamId)).toBe("4");
      expect(checkpointOf(journal, b.streamId)).toBe("5");
      // The refused record is named by an ERROR record, and its stream's position moves past it.
      expect(rejected.map(r => r.resource!.resourceVersion)).toEqual(["3"]);
      const cRecs = journal.events({ streamId: c.streamId }).records;
      expect(cRecs.map(r => [r.type, r.watchType ?? null, r.synthetic])).toEqual([
        ["event", "ERROR", true],
        ["checkpoint", null, false],
      ]);
      const status = cRecs[0].object as unknown as { reason: string; message: string };
      expect(status.reason).toBe("KrplyRecordRejected");
      expect(status.message).toMatch(/ConfigMap ns-c\/bad at resourceVersion 3/);
      expect(status.message).toMatch(/is not a date/);
      expect(checkpointOf(journal, c.streamId)).toBe("3");
      expect(c.committedRvs).toEqual(["3"]);

      // The stream keeps recording after it.
      await sink.push(item(c, "bad", 6));
      await sink.settled(c.streamId);
      expect(eventRvs(journal, c.streamId)).toEqual(["6"]);
      expect(checkpointOf(journal, c.streamId)).toBe("6");
      expect(journal.fsck()).toMatchObject({ ok: true, problems: [] });
    });

    it("inside a baseline page leaves the page's other records stored", async () => {
      const sink = sinkWith({ capacity: 1000, maxBatch: 1000 });
      const page = Array.from({ length: 40 }, (_, i) =>
        i === 17 ? badRecord(a, `cm-${i}`, i + 1) : cmEvent(a.key, `cm-${i}`, i + 1),
      );
      await sink.push({ owner: a, epoch: 0, records: page, receivedAt: 0 });
      await sink.push(item(b, "cm", 100));
      await sink.settled(a.streamId);
      await sink.settled(b.streamId);
      expect([a.failures, b.failures, errors]).toEqual([[], [], []]);
      expect(eventRvs(journal, a.streamId)).toHaveLength(39);
      expect(eventRvs(journal, a.streamId)).not.toContain("18");
      expect(eventRvs(journal, b.streamId)).toEqual(["100"]);
    });
  });

  describe("settled", () => {
    it("resolves at once for a stream with nothing queued", async () => {
      const sink = sinkWith({ capacity: 100, maxBatch: 100 });
      await sink.push(item(b, "cm", 1));
      await sink.settled(a.streamId);
      // b's item is still queued: settling a did not need a flush.
      expect(commits).toEqual([]);
      expect(sink.depth).toBe(1);
      await sink.settled(b.streamId);
      expect(sink.depth).toBe(0);
    });

    it("waits for the stream's own items only, behind whatever was queued before them", async () => {
      const sink = sinkWith({ capacity: 100, maxBatch: 1 });
      await sink.push(item(b, "cm", 1));
      await sink.push(item(a, "cm", 2));
      await sink.push(item(b, "cm", 3));
      await sink.push(item(b, "cm", 4));
      await sink.settled(a.streamId);

      // FIFO: b@1 went first, then a@2; b@3 and b@4 are still queued.
      expect(a.committedRvs).toEqual(["2"]);
      expect(b.committedRvs).toEqual(["1"]);
      // Pipelined, b@3 may already be on its way to the writer thread.
      if (!writerThread) {
        expect(sink.depth).toBe(2);
        expect(eventRvs(journal)).toEqual(["1", "2"]);
      }
      await sink.settled(b.streamId);
      expect(b.committedRvs).toEqual(["1", "3", "4"]);
      expect(sink.depth).toBe(0);
    });

    it("counts a failed or dropped item as settled", async () => {
      const sink = sinkWith({ capacity: 100, maxBatch: 100 });
      await sink.push({ ...item(a, "cm", 1), checkpointRv: "999" });
      await sink.settled(a.streamId);
      expect(a.failures).toHaveLength(1);
      a.epoch++;
      await sink.push({ ...item(a, "cm", 2), epoch: 0 });
      await sink.settled(a.streamId);
      expect(a.failures).toHaveLength(1);
      expect(eventRvs(journal)).toEqual(["1"]);
      expect(checkpointOf(journal, a.streamId)).toBeNull();
      expect(sink.depth).toBe(0);
    });
  });
});
