import type { Store } from "../store/store";
import { TYPE_CODES } from "../store/schema";
import type { StreamInfo, StreamState } from "../types";

const GAP = TYPE_CODES.indexOf("gap");

/** Lists streams with their durable position, baseline and gap state. */
export function listStreams(store: Store): StreamInfo[] {
  // One read transaction, so the registry and the rows come from one snapshot: a stream a writer
  // commits meanwhile is in both or in neither (two statements alone would each see their own).
  const rows = store.db.transaction(() => {
    store.registry.reloadStreams();
    return select(store);
  })();
  return rows.map(r => ({
    streamId: r.stream_id,
    key: store.registry.streams.get(r.id)!.key!,
    lastResourceVersion: r.last_rv,
    lastObservedAt: r.last_observed_at,
    baselinePresent: r.last_baseline_seq !== null,
    openGaps: r.open_gaps,
    // An unresolved gap degrades an otherwise active stream; explicit states win.
    state: r.state === "active" && r.open_gaps > 0 ? "degraded" : r.state,
  }));
}

function select(store: Store) {
  return store.sql
    .prep(
      `SELECT s.id, s.stream_id, s.last_rv, s.last_observed_at, s.last_baseline_seq, s.state,
         (SELECT count(*) FROM records r WHERE r.object IS NULL AND r.type=? AND r.stream=s.id
            AND r.seq > coalesce(s.last_baseline_seq, 0)) AS open_gaps
       FROM streams s WHERE s.stream_id <> '*' ORDER BY s.id`,
    )
    .all(GAP) as {
    id: number;
    stream_id: string;
    last_rv: string | null;
    last_observed_at: string | null;
    last_baseline_seq: number | null;
    state: StreamState;
    open_gaps: number;
  }[];
}
