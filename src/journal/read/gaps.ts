import type { JournalRecord } from "../../event";
import { TYPE_CODES } from "../store/schema";
import type { Store } from "../store/store";
import type { GapWindow, TimeRange } from "../types";
import { controlRecords } from "./history";

const BASELINE = TYPE_CODES.indexOf("baseline");
const PRUNED = TYPE_CODES.indexOf("pruned");

/**
 * Rows just before a gap that are searched for its last good record one gap at a time. The record
 * is usually among a stream's last few; gaps whose record is not there (a quiet stream, an RV the
 * journal does not hold) are searched together in one pass instead of one long scan each.
 */
const NEAR_ROWS = 4096;
const RV_CHUNK = 500;

/**
 * Whether a window overlaps a range. Both ends are exclusive: the last good record and the relist
 * are known moments, so a point exactly on either is not inside the gap.
 */
export function overlaps(w: GapWindow, r: TimeRange): boolean {
  return w.fromMs < r.toMs && (w.toMs === null || w.toMs > r.fromMs);
}

/**
 * Window starts by gap seq, per connection. A start depends only on rows before its gap, which
 * appends never touch and only retention removes; every prune writes a PRUNED record, so the
 * newest PRUNED seq tells when the starts must be found again.
 */
const startMemo = new WeakMap<Store, { prunedSeq: number; starts: Map<number, number | null> }>();

function memoOf(store: Store): Map<number, number | null> {
  const prunedSeq =
    (store.sql
      .prep("SELECT max(seq) FROM records WHERE object IS NULL AND type=?")
      .pluck()
      .get(PRUNED) as number | null) ?? 0;
  let m = startMemo.get(store);
  if (!m || m.prunedSeq !== prunedSeq) {
    m = { prunedSeq, starts: new Map() };
    startMemo.set(store, m);
  }
  return m.starts;
}

interface Pending {
  seq: number;
  stream: number;
  rv: string;
  /** Seq of the stream's last baseline marker before the gap (0 without one). */
  from: number;
  markerMs: number | null;
}

/**
 * Where each gap's window starts: the observed time of the stream's record of the gap's last good
 * RV, found between the stream's last baseline marker before the gap and the gap. The record that
 * made the RV durable may be an event, a baseline marker or a checkpoint.
 */
function findStarts(store: Store, gaps: { seq: number; stream: number; rv: string }[]) {
  const out = new Map<number, number | null>();
  // The stream's last baseline marker before the GAP (indexed): the last good RV is at or after it.
  const markerBefore = store.sql.prep(
    "SELECT seq, observed_at FROM records WHERE object IS NULL AND type=? AND stream=? AND seq<? ORDER BY seq DESC LIMIT 1",
  );
  // Without a durable position nothing on the stream was ever proven: from its first record.
  const first = store.sql.prep(
    "SELECT observed_at FROM records WHERE stream=? AND seq<? ORDER BY seq LIMIT 1",
  );
  const near = store.sql.prep(
    "SELECT observed_at FROM records WHERE seq>=? AND seq<? AND stream=? AND rv=? ORDER BY seq DESC LIMIT 1",
  );
  const far: Pending[] = [];
  for (const g of gaps) {
    if (g.rv === "") {
      const f = first.get(g.stream, g.seq) as { observed_at: number } | undefined;
      out.set(g.seq, f?.observed_at ?? null);
      continue;
    }
    const mk = markerBefore.get(BASELINE, g.stream, g.seq) as
      | { seq: number; observed_at: number }
      | undefined;
    const p: Pending = { ...g, from: mk?.seq ?? 0, markerMs: mk?.observed_at ?? null };
    const lo = Math.max(p.from, g.seq - NEAR_ROWS);
    const hit = near.get(lo, g.seq, g.stream, g.rv) as { observed_at: number } | undefined;
    if (hit) out.set(g.seq, hit.observed_at);
    else if (lo > p.from) far.push(p);
    // An RV the journal does not hold (pruned, or a journal restored from an older copy): the last
    // relist is the last point continuity is known from.
    else out.set(g.seq, p.markerMs);
  }
  if (far.length === 0) return out;
  // One pass over the rows before all remaining gaps, with each gap's own bounds applied below.
  const lo = Math.min(...far.map(p => p.from));
  const hi = Math.max(...far.map(p => p.seq - NEAR_ROWS));
  const rvs = [...new Set(far.map(p => p.rv))];
  const rows: { seq: number; stream: number; rv: string; observed_at: number }[] = [];
  // Chunks keep the statement under SQLite's bound on parameters however many gaps there are.
  for (let i = 0; i < rvs.length; i += RV_CHUNK) {
    const chunk = rvs.slice(i, i + RV_CHUNK);
    const stmt = store.sql.prep(
      `SELECT seq, stream, rv, observed_at FROM records WHERE seq>=? AND seq<? AND rv IN (${chunk
        .map(() => "?")
        .join(",")})`,
    );
    rows.push(...(stmt.all(lo, hi, ...chunk) as typeof rows));
  }
  for (const p of far) {
    let best: { seq: number; observed_at: number } | null = null;
    for (const r of rows) {
      if (r.stream !== p.stream || r.rv !== p.rv || r.seq < p.from || r.seq >= p.seq) continue;
      if (!best || r.seq > best.seq) best = r;
    }
    out.set(p.seq, best?.observed_at ?? p.markerMs);
  }
  return out;
}

/**
 * GAP records of a stream (or all streams) with their windows: each starts where continuity was last
 * proven, at the stream's record of the GAP's last good resourceVersion, and ends at the first
 * baseline after it, which also resolves the record. Records written between the two (a coverage
 * change after a 403, an ERROR event) prove nothing, so they never move the start.
 */
export function gapsWithWindows(
  store: Store,
  streamId?: string,
): { record: JournalRecord; window: GapWindow }[] {
  const gaps = controlRecords(store, "gap", streamId);
  if (gaps.length === 0) return [];
  const markerAfter = store.sql.prep(
    "SELECT observed_at, rv FROM records WHERE object IS NULL AND type=? AND stream=? AND seq>? ORDER BY seq LIMIT 1",
  );
  const streamRow = (g: JournalRecord) => store.registry.streamsById.get(g.streamId)!.id;
  const memo = memoOf(store);
  const missing = gaps
    .filter(g => !memo.has(g.ingestSeq!))
    .map(g => ({
      seq: g.ingestSeq!,
      stream: streamRow(g),
      rv: g.gap?.lastGoodResourceVersion ?? "",
    }));
  if (missing.length > 0) for (const [seq, ms] of findStarts(store, missing)) memo.set(seq, ms);
  return gaps.map(g => {
    const seq = g.ingestSeq!;
    const m = markerAfter.get(BASELINE, streamRow(g), seq) as
      | { observed_at: number; rv: string }
      | undefined;
    const from = memo.get(seq) ?? null;
    const record: JournalRecord = m ? { ...g, gap: { ...g.gap!, resolvedByBaselineRv: m.rv } } : g;
    return {
      record,
      window: {
        streamId: g.streamId,
        gapSeq: seq,
        fromMs: from ?? Date.parse(g.observedAt),
        toMs: m ? m.observed_at : null,
        reason: g.gap?.reason ?? "unknown",
        lastGoodResourceVersion: g.gap?.lastGoodResourceVersion ?? "",
        resolvedByBaselineRv: m?.rv ?? null,
      },
    };
  });
}

/** Gap windows of a stream (or all streams), optionally only those overlapping a range. */
export function gapWindows(store: Store, streamId?: string, during?: TimeRange): GapWindow[] {
  const all = gapsWithWindows(store, streamId).map(g => g.window);
  return during ? all.filter(w => overlaps(w, during)) : all;
}
