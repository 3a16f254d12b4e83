// ADR 0001's reordering evidence, reproduced with the scripted fake API server: the same watch bytes, cut
// into the same chunks, through the kubernetes-fluent-client Watcher (what Pepr .Watch()/.Reconcile()
// ride on) and through our stream engine.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { K8s, kind } from "kubernetes-fluent-client";
import { streamIdOf } from "../../src/event";
import { openJournal, type Journal } from "../../src/journal";
import { KubeClient, loadKubeConfig } from "../../src/kube/client";
import { Supervisor } from "../../src/watch/supervisor";
import { chunks, cm, line, listOf, startFakeApi, steps, type FakeApi } from "../fakeapi";
import { streamKey, tempJournalPath } from "../support/journal-fixtures";

jest.setTimeout(30_000);

const kfcVersion = (
  JSON.parse(
    readFileSync(
      join(__dirname, "../../node_modules/kubernetes-fluent-client/package.json"),
      "utf8",
    ),
  ) as { version: string }
).version;

// Pepr 1.1.4's default watch config (PEPR_RESYNC_*, PEPR_RELIST_INTERVAL_SECONDS).
const peprWatchCfg = {
  resyncFailureMax: 5,
  resyncDelaySec: 5,
  lastSeenLimitSeconds: 300,
  relistIntervalSec: 600,
};

const key = streamKey("configmaps", "", "v1", "default", "fake");
const streamId = streamIdOf(key);
const spec = { key, kind: "ConfigMap", path: "/api/v1/namespaces/default/configmaps" };

/** A promise with its resolve function, so a test can open a gate from elsewhere. */
function gate(): { promise: Promise<void>; open(): void } {
  let open!: () => void;
  const promise = new Promise<void>(r => (open = r));
  return { promise, open };
}

async function until(what: string, probe: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise(r => setTimeout(r, 10));
  }
}

/** Object events of the stream in journal order, as name@rv. */
function journalled(journal: Journal): string[] {
  return journal
    .events({ streamId })
    .records.filter(r => r.type === "event")
    .map(r => `${r.resource!.name}@${r.resource!.resourceVersion}`);
}

/** Deliveries whose RV is lower than an earlier delivery of the same object. */
function outOfOrder(deliveries: string[]): string[] {
  const last = new Map<string, number>();
  const late: string[] = [];
  for (const d of deliveries) {
    const [name, rv] = d.split("@");
    if ((last.get(name) ?? -1) > Number(rv)) late.push(d);
    last.set(name, Math.max(Number(rv), last.get(name) ?? -1));
  }
  return late;
}

describe("per-object order of the two feeds (ADR 0001)", () => {
  let fake: FakeApi;
  beforeEach(async () => {
    fake = await startFakeApi();
  });
  afterEach(async () => {
    await fake.close();
  });

  // The wire carries a@12 and a@13 in one chunk and a@14 in the next. The next chunk arrives while the
  // callback for a@12 is still busy, as any callback that does I/O is: Pepr awaits the binding's
  // handler, and a Reconcile binding awaits Queue.enqueue, which resolves only once the item is
  // reconciled. Both gates below replace timing: the fake sends the second chunk only once the callback
  // holds a@12, and that callback stays busy until a@14 has reached a callback (or 3 s pass, which only
  // happens when the Watcher does wait for it).
  it("the KFC Watcher hands a Pepr callback one object's versions out of order", async () => {
    const holdsA12 = gate();
    const sawA14 = gate();
    fake.onList(listOf(11, [cm("a", 11)]));
    fake.onWatch(
      steps(
        [
          line("MODIFIED", cm("a", 12)) + line("MODIFIED", cm("a", 13)),
          () => holdsA12.promise,
          line("MODIFIED", cm("a", 14)),
        ],
        { keepOpen: true },
      ),
    );
    const entered: string[] = [];
    const previous = process.env.KUBECONFIG;
    process.env.KUBECONFIG = fake.insecureKubeconfig;
    const watcher = K8s(kind.ConfigMap)
      .InNamespace("default")
      .Watch(async o => {
        const rv = o.metadata!.resourceVersion!;
        // The order callbacks are entered in is the order a Reconcile queue is fed in.
        entered.push(`${o.metadata!.name}@${rv}`);
        if (rv === "14") sawA14.open();
        if (rv === "12") {
          holdsA12.open();
          let timer: NodeJS.Timeout | undefined;
          await Promise.race([
            sawA14.promise,
            new Promise(r => (timer = setTimeout(r, 3000))),
          ]).finally(() => clearTimeout(timer));
        }
      }, peprWatchCfg);
    try {
      await watcher.start();
      await until("four deliveries", () => entered.length >= 4);
    } finally {
      watcher.close();
      if (previous === undefined) delete process.env.KUBECONFIG;
      else process.env.KUBECONFIG = previous;
    }

    const watch = fake.requests.find(r => r.watch)!;
    expect(watch.query.get("resourceVersion")).toBe("11");
    expect(watch.query.get("allowWatchBookmarks")).toBeNull();
    if (outOfOrder(entered).length === 0) {
      throw new Error(
        `kubernetes-fluent-client ${kfcVersion} delivered ${entered.join(", ")} in wire order. ` +
          "ADR 0001 rests on this feed reordering one object's events; reconsider the ADR " +
          "(docs/adr/0001-recorder-stream-engine.md) before changing this test.",
      );
    }
    expect(entered).toEqual(["a@11", "a@12", "a@14", "a@13"]);
    expect(outOfOrder(entered)).toEqual(["a@13"]);
  });

  describe("krply stream engine", () => {
    let tmp: ReturnType<typeof tempJournalPath>;
    let journal: Journal;
    let client: KubeClient;
    let supervisor: Supervisor;

    async function start(queueCapacity: number, maxBatch: number): Promise<void> {
      client = await KubeClient.create(loadKubeConfig({ kubeconfig: fake.kubeconfig }));
      supervisor = new Supervisor({ client, journal, engine: { queueCapacity, maxBatch } });
      supervisor.add(spec);
    }

    beforeEach(() => {
      tmp = tempJournalPath("krply-feed-order-");
      journal = openJournal(tmp.path, { sync: "NORMAL" });
    });
    afterEach(async () => {
      await supervisor?.stop();
      await client?.close();
      journal.close();
      tmp.cleanup();
    });

    it("journals the same chunks in wire order", async () => {
      const durableA12 = gate();
      fake.onList(listOf(11, [cm("a", 11)]));
      fake.onWatch(
        steps(
          [
            line("MODIFIED", cm("a", 12)) + line("MODIFIED", cm("a", 13)),
            () => durableA12.promise,
            line("MODIFIED", cm("a", 14)),
          ],
          { keepOpen: true },
        ),
      );
      await start(5000, 2000);
      await until("a@12 durable", () => journalled(journal).includes("a@12"));
      durableA12.open();
      await until("a@14 durable", () => journalled(journal).includes("a@14"));

      expect(journalled(journal)).toEqual(["a@12", "a@13", "a@14"]);
      expect(journal.streams().find(s => s.streamId === streamId)?.lastResourceVersion).toBe("14");
      expect(journal.gaps(streamId)).toEqual([]);
    });

    it("keeps every object's order while a full queue holds it back and chunks keep arriving", async () => {
      // Three objects, their versions interleaved on the wire, cut every 97 bytes so lines tear
      // across chunks; a queue of 2 records committed one at a time keeps the engine waiting on the
      // journal while the fake writes on.
      const wire: string[] = [];
      let text = "";
      for (let rv = 12; rv < 132; rv++) {
        const name = ["a", "b", "c"][rv % 3];
        wire.push(`${name}@${rv}`);
        text += line("MODIFIED", cm(name, rv, { v: String(rv) }));
      }
      const bytes = Buffer.from(text);
      const pieces: Buffer[] = [];
      for (let i = 0; i < bytes.length; i += 97) pieces.push(bytes.subarray(i, i + 97));
      fake.onList(listOf(11, [cm("a", 9), cm("b", 10), cm("c", 11)]));
      fake.onWatch(chunks(pieces, { gapMs: 0, keepOpen: true }));
      await start(2, 1);
      await until("every version durable", () => journalled(journal).length === wire.length);

      expect(journalled(journal)).toEqual(wire);
      expect(outOfOrder(journalled(journal))).toEqual([]);
      expect(journal.streams().find(s => s.streamId === streamId)?.lastResourceVersion).toBe("131");
      expect(fake.requests.filter(r => r.watch)).toHaveLength(1);
    });
  });
});
