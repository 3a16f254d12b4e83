// With more objects than cache entries, the writer keeps diffing objects whose keyframe it pushed
// out of memory: it reads the keyframe back by its remembered position, or finds it on disk.
import Database from "better-sqlite3";
import fc from "fast-check";
import { eventRecord, type JournalRecord } from "../../event";
import { ENC_MASK, ENC_PATCH } from "../codec/codec";
import { openJournal } from "../index";
import { at, deployment, streamKey, tempJournalPath } from "../../../test/support/journal-fixtures";

const stream = streamKey("deployments", "apps", "v1", "shop");

describe("diffing against keyframes the cache evicted", () => {
  it("stores patches against the right keyframe and keeps every keyframe interval", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: 3 })), {
          minLength: 20,
          maxLength: 120,
        }),
        fc.integer({ min: 2, max: 5 }),
        fc.boolean(),
        (edits, keyframeEvery, reopen) => {
          const tmp = tempJournalPath();
          let j = openJournal(tmp.path, { keyframeEvery, lastVersionCacheSize: 2, sync: "NORMAL" });
          try {
            const written = new Map<number, JournalRecord[]>();
            const recs = edits.map(([obj, ready], i) => {
              const r = eventRecord({
                stream,
                watchType: written.has(obj) ? "MODIFIED" : "ADDED",
                object: deployment(`web-${obj}`, "shop", `u-${obj}`, i + 1, ready),
                observedAt: at(i),
              });
              written.set(obj, [...(written.get(obj) ?? []), r]);
              return r;
            });
            for (let i = 0; i < recs.length; i += 4) {
              j.append({ records: recs.slice(i, i + 4), checkpoints: [] });
              // A restart loses the remembered positions too; the writer must then search.
              if (reopen && i === 40) {
                j.close();
                j = openJournal(tmp.path, {
                  keyframeEvery,
                  lastVersionCacheSize: 2,
                  sync: "NORMAL",
                });
              }
            }
            for (const [obj, versions] of written) {
              const sel = {
                clusterId: "test",
                kind: "Deployment",
                namespace: "shop",
                name: `web-${obj}`,
              };
              expect(j.objectHistory(sel).map(r => r.object)).toEqual(versions.map(v => v.object));
            }
            expect(j.fsck().ok).toBe(true);
            j.close();
            const db = new Database(tmp.path, { readonly: true });
            const rows = db
              .prepare(
                "SELECT object, flags, base FROM records WHERE object IS NOT NULL ORDER BY seq",
              )
              .all() as { object: number; flags: number; base: number | null }[];
            db.close();
            // No keyframe may carry keyframeEvery or more patches.
            const perBase = new Map<number, number>();
            let patches = 0;
            for (const r of rows) {
              if ((r.flags & ENC_MASK) !== ENC_PATCH) continue;
              patches++;
              perBase.set(r.base!, (perBase.get(r.base!) ?? 0) + 1);
            }
            for (const n of perBase.values()) expect(n).toBeLessThan(keyframeEvery);
            if (keyframeEvery > 2 && edits.length > 40) expect(patches).toBeGreaterThan(0);
          } finally {
            j.close();
            tmp.cleanup();
          }
        },
      ),
      { numRuns: 25 },
    );
  });
});
