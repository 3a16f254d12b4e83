// Journals written before schema v4 store each patch against the version before it. Those rows
// must keep reading back after the upgrade, and the writer must not diff against them blindly.
import Database from "better-sqlite3";
import { eventRecord, type JournalRecord } from "../event";
import { ENC_BITS, ENC_KEYFRAME, ENC_MASK, ENC_PATCH } from "./codec/codec";
import { diffTuples } from "./codec/delta";
import { openJournal } from "./index";
import { at, deployment, streamKey, tempJournalPath } from "../../test/support/journal-fixtures";

const stream = streamKey("deployments", "apps", "v1", "shop");
const sel = { clusterId: "test", kind: "Deployment", namespace: "shop", name: "web" };
const version = (rv: number): JournalRecord =>
  eventRecord({
    stream,
    watchType: rv === 1 ? "ADDED" : "MODIFIED",
    object: deployment("web", "shop", "u1", rv, rv % 4),
    observedAt: at(rv),
  });

/** Rewrites every patch row into the pre-v4 form: a plain patch from the previous version. */
function toLegacyChain(path: string, written: JournalRecord[]): void {
  const db = new Database(path);
  try {
    const rows = db.prepare("SELECT seq, flags FROM records ORDER BY seq").all() as {
      seq: number;
      flags: number;
    }[];
    const upd = db.prepare("UPDATE records SET flags=?, body=?, base=NULL WHERE seq=?");
    rows.forEach((r, i) => {
      if ((r.flags & ENC_MASK) === ENC_KEYFRAME) return;
      const patch = JSON.stringify(diffTuples(written[i - 1].object, written[i].object));
      upd.run((r.flags & ~ENC_BITS) | ENC_PATCH, Buffer.from(patch), r.seq);
    });
  } finally {
    db.close();
  }
}

describe("pre-v4 delta chains", () => {
  it("read back exactly, and the next append starts a fresh keyframe", () => {
    const tmp = tempJournalPath();
    const written = Array.from({ length: 10 }, (_, i) => version(i + 1));
    try {
      const j1 = openJournal(tmp.path, { keyframeEvery: 100 });
      j1.append({ records: written, checkpoints: [] });
      j1.close();
      toLegacyChain(tmp.path, written);

      const j = openJournal(tmp.path, { keyframeEvery: 100 });
      try {
        expect(j.objectHistory(sel).map(r => r.object)).toEqual(written.map(r => r.object));
        expect(j.objectAt(sel, { time: at(6) }).record?.object).toEqual(written[5].object);
        expect(j.fsck()).toMatchObject({ ok: true, problems: [] });

        const next = version(11);
        j.append({ records: [next], checkpoints: [] });
        const raw = new Database(tmp.path, { readonly: true });
        const last = raw
          .prepare("SELECT flags, base FROM records ORDER BY seq DESC LIMIT 1")
          .get() as {
          flags: number;
          base: number | null;
        };
        raw.close();
        expect(last.flags & ENC_MASK).toBe(ENC_KEYFRAME);
        expect(last.base).toBeNull();
        expect(j.objectHistory(sel).at(-1)?.object).toEqual(next.object);
        expect(j.fsck()).toMatchObject({ ok: true, problems: [] });
      } finally {
        j.close();
      }
    } finally {
      tmp.cleanup();
    }
  });
});
