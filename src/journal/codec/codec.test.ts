import fc from "fast-check";
import { eventRecord } from "../../event";
import {
  encodeKeyframe,
  encodeObject,
  ENC_DEFLATE,
  ENC_KEYFRAME,
  ENC_MASK,
  ENC_PATCH,
  ENC_RV,
  ENC_STAR,
  reconstruct,
  type BaseVersion,
  type CodecOptions,
} from "./codec";
import { openJournal } from "../index";
import { at, deployment, streamKey, tempJournalPath } from "../../../test/support/journal-fixtures";

const opts: CodecOptions = { keyframeEvery: 5, deflateMinBytes: 64 };
const norm = (v: unknown): unknown => JSON.parse(JSON.stringify(v));
const key = fc.string({ maxLength: 6 }).filter(k => k !== "__proto__");
const json: fc.Arbitrary<unknown> = fc.letrec(tie => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.string({ maxLength: 8 }),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(key, tie("value"), { maxKeys: 4 }),
  ),
})).value;

type Edit = { path: string[]; op: "set"; value: unknown } | { path: string[]; op: "delete" };
const edit: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({
    path: fc.array(
      fc.constantFrom("spec", "status", "metadata", "replicas", "0", "x", "a/b", "~1"),
      { minLength: 1, maxLength: 4 },
    ),
    op: fc.constant("set" as const),
    value: json,
  }),
  fc.record({
    path: fc.array(fc.constantFrom("spec", "status", "labels", "conditions", "0", "1", "x"), {
      minLength: 1,
      maxLength: 4,
    }),
    op: fc.constant("delete" as const),
  }),
);

/** Applies an edit to a copy, creating containers along the path; arrays get index semantics. */
function applyEdit(doc: Record<string, unknown>, e: Edit): Record<string, unknown> {
  const out = structuredClone(doc);
  let cur: Record<string, unknown> = out;
  for (let i = 0; i < e.path.length - 1; i++) {
    const next = cur[e.path[i]];
    if (next === null || typeof next !== "object") cur[e.path[i]] = {};
    cur = cur[e.path[i]] as Record<string, unknown>;
  }
  const last = e.path[e.path.length - 1];
  if (Array.isArray(cur)) {
    const idx = Math.min(Number(last) || 0, cur.length);
    if (e.op === "set") cur[idx] = e.value;
    else cur.splice(idx, 1);
  } else if (e.op === "set") cur[last] = e.value;
  else delete cur[last];
  return out;
}

function versionsFrom(edits: Edit[][]): Record<string, unknown>[] {
  let doc = norm(deployment("web", "shop", "u", 1, 3)) as Record<string, unknown>;
  const out = [doc];
  for (const [i, batch] of edits.entries()) {
    for (const e of batch) doc = applyEdit(doc, e);
    // Like the API server, bump the resourceVersion of every version that still has metadata.
    const md = doc.metadata as Record<string, unknown> | null;
    if (md && typeof md === "object" && !Array.isArray(md)) md.resourceVersion = String(i + 2);
    out.push(norm(doc) as Record<string, unknown>);
  }
  return out;
}

/** The rv column a row of this version would carry, when its metadata has a string RV. */
function rowRv(v: Record<string, unknown>): string | null {
  const rv = (v.metadata as { resourceVersion?: unknown } | null)?.resourceVersion;
  return typeof rv === "string" ? rv : null;
}

describe("codec", () => {
  it("rebuilds every version of random edit sequences from keyframes and patches", () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(edit, { minLength: 1, maxLength: 3 }), { maxLength: 25 }),
        edits => {
          const versions = versionsFrom(edits);
          let keyframe: { enc: number; body: Buffer } | null = null;
          let base: BaseVersion | null = null;
          for (const [i, v] of versions.entries()) {
            const e = encodeObject(base, v, opts, rowRv(v));
            expect(e.chainLen).toBeLessThan(opts.keyframeEvery);
            if ((e.enc & ENC_MASK) === ENC_KEYFRAME) {
              keyframe = { enc: e.enc, body: e.body };
              base = { object: v, seq: i, chainLen: 0, keyframeBytes: e.keyframeBytes };
              expect(reconstruct([keyframe])).toEqual(v);
            } else {
              // A star patch applies to its keyframe alone, never to the version before it.
              expect(e.enc & ENC_STAR).toBe(ENC_STAR);
              expect(e.base).toBe(base!.seq);
              const patch = { enc: e.enc, body: e.body, rv: rowRv(v) };
              expect(reconstruct([keyframe!, patch])).toEqual(v);
              base = { ...base!, chainLen: e.chainLen };
            }
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it("leaves the resourceVersion bump out of a patch when the row's rv column holds it", () => {
    const v1 = norm(deployment("web", "shop", "u", 1, 3));
    const v2 = norm(deployment("web", "shop", "u", 2, 2)) as { metadata: Record<string, unknown> };
    const k = encodeKeyframe(v1, opts);
    const base: BaseVersion = { object: v1, seq: 1, chainLen: 0, keyframeBytes: k.keyframeBytes };
    const p = encodeObject(base, v2, opts, "2");
    expect(p.enc & ENC_RV).toBe(ENC_RV);
    const plain = encodeObject(base, v2, opts);
    expect(plain.enc & ENC_RV).toBe(0);
    expect(p.body.length).toBeLessThan(plain.body.length);
    const kf = { enc: k.enc, body: k.body };
    expect(reconstruct([kf, { enc: p.enc, body: p.body, rv: "2" }])).toEqual(v2);
    expect(() => reconstruct([kf, { enc: p.enc, body: p.body }])).toThrow(/resourceVersion/);
    // A different value is a real change of the object, so it stays in the patch.
    v2.metadata.resourceVersion = "3";
    expect(encodeObject(base, v2, opts, "2").enc & ENC_RV).toBe(0);
  });

  it("stores a version whole when its patch would touch a __proto__ key", () => {
    const v1 = JSON.parse('{"kind":"ConfigMap","data":{"a":"1"}}') as unknown;
    const v2 = JSON.parse('{"kind":"ConfigMap","data":{"a":"1","__proto__":"x"}}') as unknown;
    const k = encodeKeyframe(v1, opts);
    const e = encodeObject({ object: v1, seq: 1, chainLen: 0, keyframeBytes: 1000 }, v2, opts);
    expect(e.enc & ENC_MASK).toBe(ENC_KEYFRAME);
    expect(reconstruct([{ enc: e.enc, body: e.body }])).toEqual(v2);
    expect(k.enc & ENC_MASK).toBe(ENC_KEYFRAME);
  });

  it("turns a patch bigger than the object into a keyframe and deflates large bodies", () => {
    const small = { a: 1 };
    const k = encodeKeyframe(small, opts);
    const big = { b: "x".repeat(500) };
    const e = encodeObject(
      { object: small, seq: 1, chainLen: 0, keyframeBytes: k.keyframeBytes },
      big,
      opts,
    );
    expect(e.enc & ENC_MASK).toBe(ENC_KEYFRAME);
    expect(e.enc & ENC_DEFLATE).toBe(ENC_DEFLATE);
    expect(e.body.length).toBeLessThan(100);
    const p = encodeObject(
      { object: big, seq: 2, chainLen: 0, keyframeBytes: e.keyframeBytes },
      { ...big, c: 2 },
      opts,
    );
    expect(p.enc & ENC_MASK).toBe(ENC_PATCH);
  });

  it("round-trips random edit sequences through the journal", () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(edit, { minLength: 1, maxLength: 3 }), { maxLength: 15 }),
        fc.integer({ min: 1, max: 6 }),
        (edits, keyframeEvery) => {
          const tmp = tempJournalPath();
          const j = openJournal(tmp.path, {
            keyframeEvery,
            lastVersionCacheSize: 2,
            sync: "NORMAL",
          });
          try {
            const versions = versionsFrom(edits);
            const stream = streamKey("deployments", "apps", "v1", "shop");
            const recs = versions.map((v, i) => {
              const o = {
                ...v,
                metadata: {
                  ...(v.metadata as object),
                  name: "web",
                  namespace: "shop",
                  resourceVersion: String(i + 1),
                },
              };
              return eventRecord({
                stream,
                watchType: i === 0 ? "ADDED" : "MODIFIED",
                object: o,
                observedAt: at(i),
                kind: "Deployment",
              });
            });
            // Odd batch sizes exercise both in-batch and cross-batch diffing.
            for (let i = 0; i < recs.length; i += 3)
              j.append({ records: recs.slice(i, i + 3), checkpoints: [] });
            const sel = {
              clusterId: "test",
              kind: recs[0].resource!.kind,
              namespace: "shop",
              name: "web",
            };
            expect(j.objectHistory(sel).map(r => r.object)).toEqual(recs.map(r => r.object));
            const mid = Math.floor(recs.length / 2);
            expect(j.objectAt(sel, { time: at(mid) }).record?.object).toEqual(recs[mid].object);
            expect(j.fsck().ok).toBe(true);
          } finally {
            j.close();
            tmp.cleanup();
          }
        },
      ),
      { numRuns: 40 },
    );
  });
});
