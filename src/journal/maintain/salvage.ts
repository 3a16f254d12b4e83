// Salvage of a damaged journal: every record that can still be read and rebuilt is copied into a new
// file, in ingest order; where rows were lost, every stream gets a GAP record, so the copy never claims
// history it does not hold. The damaged file is only read.
import { gapRecord, type JournalRecord, type StreamKey } from "../../event";
import { toJournalError } from "../errors";
import { decodeRow, rowObject } from "../store/rows";
import type { RecordRow, Store } from "../store/store";
import type { Journal, SalvageResult, StreamInfo } from "../types";

/** Rows read per query; a query that meets damage is halved down to single rows. */
const CHUNK = 512;
/** Records per append into the new file. */
const BATCH = 2000;

const isCorrupt = (err: unknown): boolean => {
  const code = (err as { code?: unknown })?.code;
  if (typeof code === "string") return code === "SQLITE_CORRUPT" || code === "SQLITE_NOTADB";
  return toJournalError(err, "read").code === "CORRUPT";
};

/** The highest seq the damaged file knows: from the table, else from meta. */
function highestSeq(store: Store): number {
  try {
    const r = store.db.prepare("SELECT max(seq) AS s FROM records").get() as { s: number | null };
    if (r.s !== null) return r.s;
  } catch (err) {
    if (!isCorrupt(err)) throw err;
  }
  const m = store.db.prepare("SELECT value FROM meta WHERE key='last_seq'").get() as
    | { value: string }
    | undefined;
  return Number(m?.value ?? 0);
}

/**
 * Copies what `store` (the damaged file) still holds into `out` (a new journal that stores records
 * verbatim: they were redacted when first written). `streams` are the damaged file's streams.
 */
export function salvageInto(
  store: Store,
  streams: StreamInfo[],
  out: Journal,
  source: string,
  target: string,
  now = new Date(),
): SalvageResult {
  const select = store.db.prepare(
    `SELECT seq, event_id, type, stream, object, observed_at, watch, rv, flags, hash, meta, body, base
       FROM records WHERE seq BETWEEN ? AND ? ORDER BY seq`,
  );
  const keys = new Map<string, StreamKey>(streams.map(s => [s.streamId, s.key]));
  // The last position each stream's copied records prove, for the GAP records.
  const lastRv = new Map<string, string>();
  const lostRanges: { fromSeq: number; toSeq: number }[] = [];
  let pending: { fromSeq: number; toSeq: number } | null = null;
  let copied = 0;
  let lost = 0;
  let gaps = 0;
  let buf: JournalRecord[] = [];

  const flush = (): void => {
    if (buf.length === 0) return;
    out.append({ records: buf, checkpoints: [], streams: [...keys.values()] });
    buf = [];
  };
  const lose = (seq: number): void => {
    lost++;
    if (pending && pending.toSeq === seq - 1) pending.toSeq = seq;
    else {
      closeLoss(null);
      pending = { fromSeq: seq, toSeq: seq };
    }
  };
  // A lost run could have held any stream's records: each stream's history is unknown from its last
  // copied position until it lists again.
  const closeLoss = (at: string | null): void => {
    if (!pending) return;
    const range = pending;
    pending = null;
    lostRanges.push(range);
    const detectedAt = at ?? now.toISOString();
    for (const [streamId, key] of keys) {
      buf.push(
        gapRecord({
          stream: key,
          lastGoodResourceVersion: lastRv.get(streamId) ?? "",
          reason:
            `journal damaged: records ${range.fromSeq}-${range.toSeq} of ${source} could not be read; ` +
            `salvaged into ${target} by krply fsck --salvage`,
          detectedAt,
        }),
      );
      gaps++;
    }
  };
  const take = (row: RecordRow): void => {
    let rec: JournalRecord;
    try {
      rec = decodeRow(store, { ...row, body: null }, rowObject(store, row));
    } catch {
      // A row that reads but does not rebuild (its keyframe was lost, its body is garbage).
      return lose(row.seq);
    }
    closeLoss(rec.observedAt);
    delete rec.ingestSeq;
    buf.push(rec);
    copied++;
    const rv =
      rec.type === "gap" || rec.type === "coverage_change" || rec.type === "snapshot"
        ? null
        : (rec.resource?.resourceVersion ??
          rec.checkpoint?.resourceVersion ??
          rec.baseline?.listResourceVersion ??
          null);
    if (rv && (rec.object || rec.checkpoint || rec.baseline)) lastRv.set(rec.streamId, rv);
    if (buf.length >= BATCH) flush();
  };
  const visit = (from: number, to: number): void => {
    let rows: RecordRow[];
    try {
      rows = select.all(from, to) as RecordRow[];
    } catch (err) {
      if (!isCorrupt(err)) throw err;
      if (from === to) return lose(from);
      const mid = Math.floor((from + to) / 2);
      visit(from, mid);
      visit(mid + 1, to);
      return;
    }
    // Seqs missing from an intact range never existed (a failed batch) or were pruned: not lost.
    for (const row of rows) take(row);
  };

  const max = highestSeq(store);
  for (let from = 1; from <= max; from += CHUNK) visit(from, Math.min(max, from + CHUNK - 1));
  closeLoss(null);
  flush();
  // Intact files keep their checkpoints; each that no copied record proves is left out (a relist).
  let checkpoints = 0;
  for (const s of streams) {
    if (s.lastResourceVersion === null || lostRanges.length > 0) continue;
    try {
      out.append({
        records: [],
        checkpoints: [
          {
            streamId: s.streamId,
            resourceVersion: s.lastResourceVersion,
            observedAt: s.lastObservedAt ?? now.toISOString(),
          },
        ],
      });
      checkpoints++;
    } catch {
      // Not provable in the copy: the stream lists again when it resumes.
    }
  }
  return { source, target, copied, lost, lostRanges, gaps, streams: streams.length, checkpoints };
}
