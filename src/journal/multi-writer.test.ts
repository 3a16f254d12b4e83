import { eventRecord } from "../event";
import { openJournal } from "./index";
import { at, deployment, streamKey, tempJournalPath } from "../../test/support/journal-fixtures";

const deploys = streamKey("deployments", "apps", "v1", "shop");
const sel = { clusterId: "test", kind: "Deployment", namespace: "shop", name: "web" };

function ev(rv: number, ready: number) {
  return eventRecord({
    stream: deploys,
    watchType: rv === 1 ? "ADDED" : "MODIFIED",
    object: deployment("web", "shop", "u1", rv, ready),
    observedAt: at(rv),
  });
}

describe("two writable connections on one journal", () => {
  it("interleave appends without seq clashes, duplicates or broken delta chains", () => {
    const tmp = tempJournalPath();
    const a = openJournal(tmp.path, { keyframeEvery: 8 });
    const b = openJournal(tmp.path, { keyframeEvery: 8 });
    try {
      a.append({ records: [ev(1, 0), ev(2, 1)], checkpoints: [] });
      // b opened before a wrote, so its counters and caches are stale until it catches up.
      expect(b.append({ records: [ev(2, 1), ev(3, 2)], checkpoints: [] })).toMatchObject({
        appended: 1,
        duplicates: 1,
        firstSeq: 3,
      });
      expect(a.append({ records: [ev(4, 3)], checkpoints: [] })).toMatchObject({ firstSeq: 4 });

      const history = a.objectHistory(sel);
      expect(history.map(r => r.resource?.resourceVersion)).toEqual(["1", "2", "3", "4"]);
      const readyOf = (o: unknown) =>
        (o as { status: { readyReplicas: number } }).status.readyReplicas;
      expect(history.map(r => readyOf(r.object))).toEqual([0, 1, 2, 3]);
      expect(b.fsck()).toMatchObject({ ok: true, problems: [] });
    } finally {
      a.close();
      b.close();
      tmp.cleanup();
    }
  });
});
