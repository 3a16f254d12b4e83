import type Database from "better-sqlite3";
import {
  applyPatchBody,
  ENC_KEYFRAME,
  ENC_MASK,
  ENC_PATCH,
  ENC_STAR,
  keyframeText,
  type BaseVersion,
} from "../codec/codec";
import type { ObjectBuckets } from "./buckets";
import { LruCache, type KeyframePosition } from "./cache";
import type { KeyframeBodies } from "./keyframe-bodies";
import { BUCKETS_CTE, OBJECT_BUCKET } from "./schema";
import type { Statements } from "./statements";

/** The columns a stored object version is rebuilt from. */
export interface BodyRow {
  seq: number;
  flags: number;
  body: Buffer | null;
  base: number | null;
  rv: string | null;
}

// Bound parameters per keyframe query; SQLite's limit is far higher, but statements are cached per shape.
const KEYFRAME_CHUNK = 500;

/** Rebuilds stored object versions from keyframes and patches over one connection. */
export class Versions {
  private readonly keyframeTexts = new LruCache<number, string>(1024);
  private readonly stmt;

  constructor(
    db: Database.Database,
    private readonly sql: Statements,
    private readonly buckets: ObjectBuckets,
  ) {
    // Object-row statements take the index bucket first (see buckets.ts).
    this.stmt = {
      chain: db.prepare(
        `SELECT seq, flags, body FROM records WHERE ${OBJECT_BUCKET}=? AND object=? AND seq<=? AND body IS NOT NULL ORDER BY seq DESC`,
      ),
      latest: db.prepare(
        `SELECT seq, flags, body, base, rv FROM records WHERE ${OBJECT_BUCKET}=? AND object=? AND seq<=? AND body IS NOT NULL ORDER BY seq DESC LIMIT 1`,
      ),
      bodyAt: db.prepare("SELECT seq, flags, body, base, rv FROM records WHERE seq=?"),
      // The writer's cache misses: an array, not a row object (better-sqlite3 sets each named
      // column of an object through its C++ API).
      keyframeBody: db.prepare("SELECT flags, body FROM records WHERE seq=?").raw(),
      patchesSince: db.prepare(
        `${BUCKETS_CTE} SELECT count(*) AS n FROM b CROSS JOIN records r ON r.${OBJECT_BUCKET}=b.k AND r.object=? AND r.seq>?`,
      ),
    };
  }

  /** Forgets cached keyframe texts: seqs of a rolled-back batch are reused. */
  forget(): void {
    this.keyframeTexts.clear();
  }

  /** An object's newest row with a stored body at or before seq. */
  latestRow(objectId: number, seq: number): BodyRow | undefined {
    return this.buckets.newest(
      seq,
      b => this.stmt.latest.get(b, objectId, seq) as BodyRow | undefined,
    );
  }

  /**
   * The keyframe an object's next version should be diffed against, read from disk after a cache
   * miss: the keyframe of its newest row. Null when the object has no versions, or when its newest
   * row belongs to a pre-v4 chain (the writer then starts a fresh keyframe). A known position
   * (remembered when the writer's cache evicted it) skips the search. The keyframe body read goes
   * into the writer's tier of bodies, when given, so the object's next miss reads nothing.
   */
  currentBase(
    objectId: number,
    known?: KeyframePosition,
    bodies?: KeyframeBodies,
  ): BaseVersion | null {
    if (known) {
      const text = this.writerKeyframeJson(objectId, known.seq, bodies);
      // A literal, not {...known, object}: V8 reads fields of spread-and-extend objects slowly.
      return {
        object: JSON.parse(text),
        seq: known.seq,
        chainLen: known.chainLen,
        keyframeBytes: known.keyframeBytes,
      };
    }
    const row = this.latestRow(objectId, Number.MAX_SAFE_INTEGER);
    if (!row?.body) return null;
    let kfSeq = row.seq;
    let text: string;
    if ((row.flags & ENC_MASK) === ENC_KEYFRAME) {
      text = keyframeText(row.flags, row.body);
      bodies?.set(objectId, row.seq, row.flags, row.body);
    } else if (row.flags & ENC_STAR && row.base !== null) {
      kfSeq = row.base;
      text = this.writerKeyframeJson(objectId, kfSeq, bodies);
    } else return null;
    const range = this.buckets.range(kfSeq + 1, Number.MAX_SAFE_INTEGER);
    const n = range
      ? (this.stmt.patchesSince.get(...range, objectId, kfSeq) as { n: number }).n
      : 0;
    return { object: JSON.parse(text), seq: kfSeq, chainLen: n, keyframeBytes: text.length };
  }

  /** Rebuilds an object's version at or before seq; the seq returned is the row it came from. */
  versionAt(objectId: number, seq: number): { seq: number; object: unknown } {
    const row = this.latestRow(objectId, seq);
    if (!row) throw new Error(`object ${objectId}: no version at or before ${seq}`);
    return { seq: row.seq, object: this.objectOfRow(objectId, row) };
  }

  /** The object stored in one of an object's rows, as a fresh value the caller may mutate. */
  objectOfRow(objectId: number, row: BodyRow, prefetched?: Map<number, BodyRow>): unknown {
    if (!row.body) throw new Error(`record ${row.seq} has no stored object`);
    const enc = row.flags & ENC_MASK;
    if (enc === ENC_KEYFRAME) return JSON.parse(this.keyframeJson(row));
    if (enc !== ENC_PATCH) throw new Error(`record ${row.seq}: unknown encoding ${enc}`);
    if (row.flags & ENC_STAR) {
      if (row.base === null) throw new Error(`record ${row.seq}: patch without a keyframe`);
      const pre = prefetched?.get(row.base);
      const text = pre?.body
        ? keyframeText(pre.flags, pre.body)
        : this.keyframeJsonAt(objectId, row.base);
      return applyPatchBody(JSON.parse(text), row.flags, row.body, row.rv);
    }
    return this.legacyChainAt(objectId, row.seq);
  }

  /**
   * Keyframe rows by seq, read in ascending order with one statement per chunk: a bulk read of
   * thousands of objects then walks the file forward instead of seeking once per object.
   */
  keyframeRows(seqs: readonly number[]): Map<number, BodyRow> {
    const sorted = [...new Set(seqs)].sort((a, b) => a - b);
    const out = new Map<number, BodyRow>();
    for (let i = 0; i < sorted.length; i += KEYFRAME_CHUNK) {
      const chunk = sorted.slice(i, i + KEYFRAME_CHUNK);
      const rows = this.sql
        .prep(
          `SELECT seq, flags, body, base, rv FROM records WHERE seq IN (${chunk.map(() => "?").join(",")}) ORDER BY seq`,
        )
        .all(...chunk) as BodyRow[];
      for (const r of rows) if ((r.flags & ENC_MASK) === ENC_KEYFRAME) out.set(r.seq, r);
    }
    return out;
  }

  /** The JSON text of one of an object's keyframes, by its seq. */
  keyframeJsonAt(objectId: number, seq: number): string {
    const hit = this.keyframeTexts.get(seq);
    if (hit !== undefined) return hit;
    const kf = this.stmt.bodyAt.get(seq) as BodyRow | undefined;
    if (!kf?.body || (kf.flags & ENC_MASK) !== ENC_KEYFRAME)
      throw new Error(`object ${objectId}: keyframe ${seq} is missing`);
    return this.keyframeJson(kf);
  }

  /**
   * A keyframe's JSON text for the writer's cache, past keyframeTexts: the writer parses it into its
   * own cache, and by the time the object misses again that text would long have left the LRU.
   */
  private writerKeyframeJson(objectId: number, seq: number, bodies?: KeyframeBodies): string {
    const kf = this.stmt.keyframeBody.get(seq) as [number, Buffer | null] | undefined;
    if (!kf?.[1] || (kf[0] & ENC_MASK) !== ENC_KEYFRAME)
      throw new Error(`object ${objectId}: keyframe ${seq} is missing`);
    const text = keyframeText(kf[0], kf[1]);
    bodies?.set(objectId, seq, kf[0], kf[1]);
    return text;
  }

  /** Keyframe JSON of a keyframe row; keyframes never change once written, so their text is cached. */
  keyframeJson(row: BodyRow): string {
    const hit = this.keyframeTexts.get(row.seq);
    if (hit !== undefined) return hit;
    const text = keyframeText(row.flags, row.body!);
    this.keyframeTexts.set(row.seq, text);
    return text;
  }

  /** Pre-v4 rows: walk back through every patch to the keyframe, then forward again. */
  private legacyChainAt(objectId: number, seq: number): unknown {
    const links: { enc: number; body: Buffer }[] = [];
    this.buckets.newest(seq, b => {
      for (const r of this.stmt.chain.all(b, objectId, seq) as {
        seq: number;
        flags: number;
        body: Buffer;
      }[]) {
        links.push({ enc: r.flags, body: r.body });
        if ((r.flags & ENC_MASK) === ENC_KEYFRAME) return true;
      }
      return undefined;
    });
    links.reverse();
    if (links.length === 0 || (links[0].enc & ENC_MASK) !== ENC_KEYFRAME) {
      throw new Error(`object ${objectId}: no keyframe at or before record ${seq}`);
    }
    let object: unknown = JSON.parse(keyframeText(links[0].enc, links[0].body));
    for (let i = 1; i < links.length; i++)
      object = applyPatchBody(object, links[i].enc, links[i].body);
    return object;
  }
}
