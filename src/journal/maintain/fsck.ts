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
/** Rows between two yields of fsckSteps: a few milliseconds of work. */
const ROWS_PER_STEP = 2000;

/** Checks schema, ingest order, every delta chain and every checkpoint against the records. */
export function runFsck(store: Store): FsckReport {
  const steps = fsckSteps(store);
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/**
 * runFsck in slices: yields the rows checked so far every ROWS_PER_STEP rows, so a caller can give
 * the event loop back between slices (the scheduled check). Its statements stay open across yields,
 * so it must run on a connection nothing else uses meanwhile.
 */
export function* fsckSteps(store: Store): Generator<number, FsckReport, void> {
  const db = store.db;
  // One read transaction, so every slice sees the same file however long the check takes.
  const own = !db.inTransaction;
  if (own) db.exec("BEGIN");
  try {
    return yield* checkAll(store);
  } finally {
    if (own && db.inTransaction) db.exec("COMMIT");
  }
}

function* checkAll(store: Store): Generator<number, FsckReport, void> {
  const db = store.db;
  const problems: string[] = [];
  const report = (p: string): void => {
    if (problems.length < MAX_PROBLEMS) problems.push(p);
  };
  const version = db.pragma("user_version", { simple: true }) as number;
  if (version !== SCHEMA_VERSION) report(`schema version ${version}, expected ${SCHEMA_VERSION}`);
  // SQLite's page-level check is one call that cannot be sliced (about a second per 250 MB); a
  // slice boundary on each side keeps it from adding to another slice.
  yield 0;
  const integrity = db.pragma("quick_check", { simple: true }) as string;
  if (integrity !== "ok") report(`sqlite quick_check: ${integrity}`);
  yield 0;
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
    if (checked % ROWS_PER_STEP === 0) yield checked;
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
  let decoded = 0;
  for (const r of rows) {
    if (++decoded % ROWS_PER_STEP === 0) yield checked + decoded;
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

/** Rows the start-up check decodes: enough to see the newest pages, few enough to stay under a second. */
export const TAIL_ROWS = 2000;

/**
 * The bounded check run at start: the schema version, meta's last seq, and the newest `rows` records
 * decoded (each star patch against its keyframe) and compared with their hashes. It reads the pages
 * the next appends build on and a handful of keyframes, whatever the size of the file; the full
 * check (runFsck) reads everything and runs as `krply fsck` and as a scheduled job.
 */
export function runTailCheck(store: Store, rows = TAIL_ROWS): FsckReport {
  const db = store.db;
  const problems: string[] = [];
  const report = (p: string): void => {
    if (problems.length < MAX_PROBLEMS) problems.push(p);
  };
  const version = db.pragma("user_version", { simple: true }) as number;
  if (version !== SCHEMA_VERSION) report(`schema version ${version}, expected ${SCHEMA_VERSION}`);
  const maxSeq =
    (db.prepare("SELECT max(seq) AS s FROM records").get() as { s: number | null }).s ?? 0;
  const last = db.prepare("SELECT value FROM meta WHERE key='last_seq'").get() as
    | { value: string }
    | undefined;
  if (last && Number(last.value) < maxSeq)
    report(`meta last_seq ${last.value} is behind max ingestSeq ${maxSeq}`);
  const keyframe = db.prepare("SELECT flags, body FROM records WHERE seq=?");
  const tail = db
    .prepare(
      "SELECT seq, object, flags, hash, body, base, rv FROM records WHERE seq > ? AND body IS NOT NULL ORDER BY seq",
    )
    .all(maxSeq - rows) as {
    seq: number;
    object: number | null;
    flags: number;
    hash: Buffer | string | null;
    body: Buffer;
    base: number | null;
    rv: string | null;
  }[];
  let checked = 0;
  for (const r of tail) {
    const enc = r.flags & ENC_MASK;
    let doc: unknown;
    try {
      if (enc === ENC_KEYFRAME) doc = JSON.parse(keyframeText(r.flags, r.body));
      else if (enc === ENC_PATCH && r.flags & ENC_STAR) {
        const kf =
          r.base === null
            ? undefined
            : (keyframe.get(r.base) as { flags: number; body: Buffer } | undefined);
        if (!kf) throw new Error(`keyframe ${r.base} of this object is missing`);
        doc = applyPatchBody(JSON.parse(keyframeText(kf.flags, kf.body)), r.flags, r.body, r.rv);
      } else continue; // a pre-v4 patch needs its whole chain: the full check covers it
      checked++;
      if (r.hash !== null) {
        const want = typeof r.hash === "string" ? r.hash : r.hash.toString("hex");
        if (objectHash(doc) !== want)
          report(`record ${r.seq}: rebuilt object does not match its hash`);
      }
    } catch (err) {
      report(
        `record ${r.seq}: cannot be rebuilt: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  }
  return { ok: problems.length === 0, checked, problems };
}
