import { objectHash } from "../../event";
import {
  applyPatchBody,
  ENC_KEYFRAME,
  ENC_MASK,
  ENC_PATCH,
  ENC_STAR,
  keyframeText,
} from "../codec/codec";
import { SCHEMA_VERSION } from "../store/schema";
import type { Store } from "../store/store";
import type { FsckReport } from "../types";

const MAX_PROBLEMS = 100;

/** Checks schema, ingest order, every delta chain and every checkpoint against the records. */
export function runFsck(store: Store): FsckReport {
  const db = store.db;
  const problems: string[] = [];
  const report = (p: string): void => {
    if (problems.length < MAX_PROBLEMS) problems.push(p);
  };
  const version = db.pragma("user_version", { simple: true }) as number;
  if (version !== SCHEMA_VERSION) report(`schema version ${version}, expected ${SCHEMA_VERSION}`);
  const integrity = db.pragma("quick_check", { simple: true }) as string;
  if (integrity !== "ok") report(`sqlite quick_check: ${integrity}`);
  store.registry.reloadStreams();

  const dupIds = db
    .prepare("SELECT count(*) - count(DISTINCT event_id) AS d FROM records")
    .get() as { d: number };
  if (dupIds.d !== 0) report(`${dupIds.d} duplicate event ids`);
  const last = db.prepare("SELECT value FROM meta WHERE key='last_seq'").get() as
    | { value: string }
    | undefined;
  const maxSeq =
    (db.prepare("SELECT max(seq) AS s FROM records").get() as { s: number | null }).s ?? 0;
  if (last && Number(last.value) < maxSeq)
    report(`meta last_seq ${last.value} is behind max ingestSeq ${maxSeq}`);

  // Ingest order and stream references over every row.
  let checked = 0;
  let prevSeq = 0;
  for (const r of db.prepare("SELECT seq, stream FROM records ORDER BY seq").iterate() as Iterable<{
    seq: number;
    stream: number;
  }>) {
    checked++;
    if (r.seq <= prevSeq) report(`ingestSeq ${r.seq} does not ascend (after ${prevSeq})`);
    prevSeq = r.seq;
    if (!store.registry.streams.has(r.stream))
      report(`record ${r.seq} names unknown stream ${r.stream}`);
  }
  // Each object's versions in order: a star patch must apply to the keyframe its base names, a
  // pre-v4 patch to the version before it. One object's keyframes are held at a time.
  let obj: number | null = null;
  let doc: unknown;
  const keyframes = new Map<number, string>();
  const rows = db
    .prepare(
      "SELECT seq, object, flags, hash, body, base, rv FROM records WHERE body IS NOT NULL ORDER BY object, seq",
    )
    .iterate() as Iterable<{
    seq: number;
    object: number | null;
    flags: number;
    hash: Buffer | string | null;
    body: Buffer;
    base: number | null;
    rv: string | null;
  }>;
  for (const r of rows) {
    const enc = r.flags & ENC_MASK;
    if (r.object !== obj) {
      obj = r.object;
      doc = undefined;
      keyframes.clear();
    }
    try {
      if (enc === ENC_KEYFRAME) {
        const text = keyframeText(r.flags, r.body);
        if (r.object !== null) keyframes.set(r.seq, text);
        doc = JSON.parse(text);
      } else if (enc === ENC_PATCH && r.flags & ENC_STAR) {
        const kf = r.base === null ? undefined : keyframes.get(r.base);
        if (kf === undefined) throw new Error(`keyframe ${r.base} of this object is missing`);
        doc = applyPatchBody(JSON.parse(kf), r.flags, r.body, r.rv);
      } else if (enc === ENC_PATCH) {
        if (r.object === null || doc === undefined)
          throw new Error("patch without a preceding version");
        doc = applyPatchBody(doc, r.flags, r.body);
      } else throw new Error(`unknown encoding ${enc}`);
      if (r.hash !== null) {
        const want = typeof r.hash === "string" ? r.hash : r.hash.toString("hex");
        if (objectHash(doc) !== want)
          report(`record ${r.seq}: rebuilt object does not match its hash`);
      }
    } catch (err) {
      doc = undefined;
      report(
        `record ${r.seq}: delta chain broken: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  }

  const rvAt = db.prepare("SELECT 1 FROM records WHERE stream=? AND rv=? LIMIT 1");
  for (const s of db.prepare("SELECT id, stream_id, last_rv FROM streams").all() as {
    id: number;
    stream_id: string;
    last_rv: string | null;
  }[]) {
    if (s.last_rv !== null && !rvAt.get(s.id, s.last_rv)) {
      report(`stream ${s.stream_id} checkpoint ${s.last_rv} matches no durable record`);
    }
  }
  return { ok: problems.length === 0, checked, problems };
}
