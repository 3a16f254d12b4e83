import type { JournalRecord } from "../event/schema";
import type { Journal } from "../journal/types";
import { gapSpans, type GapSpan } from "./coverage";
import { matchesLabels, parseLabelSelector } from "./labels";
import { JournalReader } from "./reader";

export interface SearchQuery {
  clusterId?: string;
  kind?: string;
  /** Matches names that start with this text. */
  namePrefix: string;
  /** Equality label selector; a range matches when any version in it carried the labels. */
  labelSelector?: string;
}

/** One stretch of time during which an object existed (as far as the journal saw). */
export interface ExistenceRange {
  from: string;
  /** When it stopped existing; null if it still exists at the end of the journal. */
  to: string | null;
  uid: string;
  createdAt: string | null;
  /** "created" when its ADDED event was recorded live; otherwise it was first seen already existing. */
  start: "created" | "first-seen";
  end: "deleted" | "vanished-in-gap" | null;
  /** true when a gap overlaps the range, so it may have come or gone unseen inside it. */
  uncertain: boolean;
}

export interface SearchHit {
  clusterId: string;
  kind: string;
  group: string;
  namespace: string;
  name: string;
  ranges: ExistenceRange[];
}

function labelsOf(rec: JournalRecord): Record<string, string> | undefined {
  return (rec.object?.metadata as { labels?: Record<string, string> } | undefined)?.labels;
}

/** Turns an object's history into existence ranges, keeping those whose versions match the labels. */
export function existenceRanges(
  history: JournalRecord[],
  matches: (rec: JournalRecord) => boolean,
): (ExistenceRange & { matched: boolean })[] {
  const out: (ExistenceRange & { matched: boolean })[] = [];
  let open: (ExistenceRange & { matched: boolean }) | null = null;
  for (const rec of history) {
    if (!rec.object || !rec.resource) continue;
    const uid = rec.resource.uid;
    if (open && (rec.watchType === "DELETED" || uid !== open.uid)) {
      open.to = rec.observedAt;
      open.end = rec.watchType === "DELETED" ? "deleted" : "vanished-in-gap";
      open.matched ||= rec.watchType === "DELETED" && matches(rec);
      out.push(open);
      open = null;
    }
    if (rec.watchType === "DELETED") continue;
    if (!open) {
      const md = rec.object.metadata as { creationTimestamp?: string };
      open = {
        from: rec.observedAt,
        to: null,
        uid,
        createdAt: md.creationTimestamp ?? null,
        start: rec.type === "event" && rec.watchType === "ADDED" ? "created" : "first-seen",
        end: null,
        uncertain: false,
        matched: false,
      };
    }
    open.matched ||= matches(rec);
  }
  if (open) out.push(open);
  return out;
}

function likePrefix(prefix: string): string {
  return `${prefix.replace(/[\\%_]/g, c => `\\${c}`)}%`;
}

function overlaps(g: GapSpan, r: ExistenceRange): boolean {
  const from = Date.parse(r.from);
  const to = r.to === null ? Infinity : Date.parse(r.to);
  return g.fromMs < to && (g.toMs === null || g.toMs > from);
}

/** Finds when and where objects existed, by kind, name prefix and labels, across all history. */
export function search(
  journal: Journal,
  q: SearchQuery,
): { hits: SearchHit[]; warnings: string[] } {
  const reqs = parseLabelSelector(q.labelSelector ?? "");
  const matches = (rec: JournalRecord) => matchesLabels(labelsOf(rec), reqs);
  const reader = new JournalReader(journal.path);
  try {
    const warnings: string[] = [];
    const pruned = reader.prunedBefore();
    if (pruned)
      warnings.push(`history before ${pruned} was pruned; earlier existence is not shown`);
    const gapsByStream = new Map<string, GapSpan[]>();
    const gapsOf = (streamId: string) => {
      let g = gapsByStream.get(streamId);
      if (!g) gapsByStream.set(streamId, (g = gapSpans(journal, reader, streamId)));
      return g;
    };
    const hits: SearchHit[] = [];
    for (const o of reader.findObjects(likePrefix(q.namePrefix), q.clusterId, q.kind)) {
      const history = journal.objectHistory({ ...o, group: o.group });
      const ranges = existenceRanges(history, matches).filter(r => r.matched);
      if (ranges.length === 0) continue;
      const last = ranges[ranges.length - 1];
      const now = reader.positionAt(o, Date.now() + 1e12);
      if (last.to === null && now && !now.exists && now.absentAtMs !== undefined) {
        last.to = new Date(now.absentAtMs).toISOString();
        last.end = "vanished-in-gap";
      }
      const streams = [...new Set(history.map(h => h.streamId))];
      for (const r of ranges) {
        const gaps = streams.flatMap(gapsOf).filter(g => overlaps(g, r));
        r.uncertain = gaps.length > 0 || r.end === "vanished-in-gap";
      }
      hits.push({
        clusterId: o.clusterId,
        kind: o.kind,
        group: o.group,
        namespace: o.namespace,
        name: o.name,
        ranges: ranges.map(({ matched: _m, ...r }) => r),
      });
    }
    if (hits.some(h => h.ranges.some(r => r.uncertain))) {
      warnings.push(
        "some ranges overlap gaps: the object may have come or gone unseen inside them",
      );
    }
    return { hits, warnings };
  } finally {
    reader.close();
  }
}
