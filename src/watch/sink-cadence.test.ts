import { eventRecord, streamIdOf, type StreamKey } from "../event";
import { openJournal, type Journal } from "../journal";
import { at, configMap, streamKey, tempJournalPath } from "../../test/support/journal-fixtures";
import { JournalSink, type SinkItem, type SinkOwner } from "./sink";

// The commit cadence (commitEveryMs): under load, events that arrive within the interval after a
// commit share the next one; a lone event after a quiet spell, and a full batch, commit at once.
// Date and setTimeout are faked; setImmediate stays real, so "at once" means "without the clock moving".

class Owner implements SinkOwner {
  readonly streamId: string;
  epoch = 0;
  constructor(readonly key: StreamKey) {
    this.streamId = streamIdOf(key);
  }
  committed(): void {}
  failed(): void {}
}

function item(owner: Owner, rv: number): SinkItem {
  return {
    owner,
    epoch: owner.epoch,
    records: [
      eventRecord({
        stream: owner.key,
        watchType: "MODIFIED",
        object: configMap(`cm-${rv % 7}`, owner.key.namespace, `uid-${rv % 7}`, rv, { v: `${rv}` }),
        observedAt: at(rv),
      }),
    ],
    checkpointRv: String(rv),
    receivedAt: 0,
  };
}

const turns = async (n = 5) => {
  for (let i = 0; i < n; i++) await new Promise(r => setImmediate(r));
};

describe("JournalSink commit cadence", () => {
  let tmp: ReturnType<typeof tempJournalPath>;
  let journal: Journal;
  let owner: Owner;
  let commits: number[][];
  const sinkWith = (commitEveryMs: number, maxBatch = 100) =>
    new JournalSink(
      journal,
      { capacity: 1000, maxBatch, commitEveryMs },
      { onCommit: items => commits.push(items.map(i => Number(i.checkpointRv))) },
    );

  beforeEach(() => {
    jest.useFakeTimers({ doNotFake: ["setImmediate", "nextTick", "queueMicrotask"] });
    tmp = tempJournalPath("krply-sink-cadence-");
    journal = openJournal(tmp.path, { sync: "NORMAL" });
    owner = new Owner(streamKey("configmaps", "", "v1", "ns-a"));
    commits = [];
  });
  afterEach(() => {
    jest.useRealTimers();
    journal.close();
    tmp.cleanup();
  });

  it("gathers what arrives within the interval after a commit into the next commit", async () => {
    const sink = sinkWith(100);
    await sink.push(item(owner, 1));
    await turns();
    expect(commits).toEqual([[1]]); // the first event after a quiet spell does not wait

    for (const rv of [2, 3, 4]) await sink.push(item(owner, rv));
    await turns();
    expect(commits).toEqual([[1]]);
    expect(sink.depth).toBe(3);
    jest.advanceTimersByTime(99);
    await turns();
    expect(commits).toEqual([[1]]);
    jest.advanceTimersByTime(1);
    await turns();
    expect(commits).toEqual([[1], [2, 3, 4]]);
    expect(journal.streams()[0].lastResourceVersion).toBe("4");

    jest.advanceTimersByTime(5000);
    await sink.push(item(owner, 5));
    await turns();
    expect(commits).toEqual([[1], [2, 3, 4], [5]]);
  });

  it("commits a full batch without waiting for the interval", async () => {
    const sink = sinkWith(100, 3);
    await sink.push(item(owner, 1));
    await turns();
    for (const rv of [2, 3]) await sink.push(item(owner, rv));
    await turns();
    expect(commits).toEqual([[1]]);
    await sink.push(item(owner, 4)); // the queue now holds maxBatch records
    await turns();
    expect(commits).toEqual([[1], [2, 3, 4]]);
    expect(sink.depth).toBe(0);
  });

  it("without an interval commits each arrival on the next turn, as before", async () => {
    const sink = sinkWith(0);
    await sink.push(item(owner, 1));
    await turns();
    await sink.push(item(owner, 2));
    await turns();
    expect(commits).toEqual([[1], [2]]);
  });

  it("takes a cadence set later (a big cluster) for the commits after it", async () => {
    const sink = sinkWith(0);
    await sink.push(item(owner, 1));
    await turns();
    sink.commitEvery(100);
    await sink.push(item(owner, 2));
    await turns();
    expect(commits).toEqual([[1]]);
    jest.advanceTimersByTime(100);
    await turns();
    expect(commits).toEqual([[1], [2]]);
  });

  it("settles a waiting stream once the interval has passed", async () => {
    const sink = sinkWith(100);
    await sink.push(item(owner, 1));
    await turns();
    await sink.push(item(owner, 2));
    let settled = false;
    const done = sink.settled(owner.streamId).then(() => (settled = true));
    await turns();
    expect(settled).toBe(false);
    jest.advanceTimersByTime(100);
    await done;
    expect(commits).toEqual([[1], [2]]);
  });
});
