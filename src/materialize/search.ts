import type { JournalRecord } from "../event";
import { gapOverlaps, type GapWindow, type JournalView } from "../journal";
import { answer, coverageOf, type Answer } from "./answer";
import { matchesLabels, parseLabelSelector } from "./labels";
import { warn } from "./warnings";

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

/**
 * Where a search page ends: the sort key of the last object it examined. Objects are examined in
 * this order, so a key stays valid while objects are added (a new one sorts in place) or pruned.
 */
export type SearchKey = [
  clusterId: string,
  kind: string,
  namespace: string,
  name: string,
  group: string,
  id: number,
];

export interface SearchPage {
  hits: SearchHit[];
  /** Where the next page starts; null when no object is left to examine. */
  next: SearchKey | null;
}

/** Objects one page examines at most, hits or not: a selective label filter must not scan all. */
export const SEARCH_EXAMINED_PER_PAGE = 500;

type Found = ReturnType<JournalView["findObjects"]>[number];

const keyOf = (o: Found): SearchKey => [o.clusterId, o.kind, o.namespace, o.name, o.group, o.id];

/** Plain code-unit order (no locale collation: its first use loads ICU, and names are ASCII). */
function compareKeys(a: SearchKey, b: SearchKey): number {
  for (let i = 0; i < 5; i++) {
    const x = a[i] as string;
    const y = b[i] as string;
    if (x !== y) return x < y ? -1 : 1;
  }
  return a[5] - b[5];
}

/** Finds when and where objects existed, by kind, name prefix and labels, across all history. */
export function search(view: JournalView, q: SearchQuery): Answer<SearchHit[]> {
  const page = searchPage(view, q, { limit: Infinity, examine: Infinity });
  return { ...page, data: page.data.hits };
}

/**
 * One page of a search: up to `limit` hits from at most `examine` objects after `after`, in key
 * order. A page may hold fewer hits than its limit and still have a next one.
 */
export function searchPage(
  view: JournalView,
  q: SearchQuery,
  page: { limit: number; after?: SearchKey; examine?: number },
): Answer<SearchPage> {
  const reqs = parseLabelSelector(q.labelSelector ?? "");
  const matches = (rec: JournalRecord) => matchesLabels(labelsOf(rec), reqs);
  const warnings: string[] = [];
  const pruned = view.prunedBefore();
  if (pruned) warnings.push(warn.prunedExistence(pruned));
  const gapsByStream = new Map<string, GapWindow[]>();
  const gapsOf = (streamId: string) => {
    let g = gapsByStream.get(streamId);
    if (!g) gapsByStream.set(streamId, (g = view.gapWindows(streamId)));
    return g;
  };
  const touched: GapWindow[] = [];
  const hits: SearchHit[] = [];
  const after = page.after;
  const candidates = view
    .findObjects(q.namePrefix, { clusterId: q.clusterId, kind: q.kind })
    .map(o => ({ o, key: keyOf(o) }))
    .filter(c => after === undefined || compareKeys(c.key, after) > 0)
    .sort((a, b) => compareKeys(a.key, b.key));
  const examine = page.examine ?? SEARCH_EXAMINED_PER_PAGE;
  let examined = 0;
  for (const { o } of candidates) {
    if (hits.length >= page.limit || examined >= examine) break;
    examined++;
    const history = view.objectHistory({ ...o, group: o.group });
    const ranges = existenceRanges(history, matches).filter(r => r.matched);
    if (ranges.length === 0) continue;
    const last = ranges[ranges.length - 1];
    const now = view.positionAt(o, Date.now() + 1e12);
    if (last.to === null && now?.absence) {
      last.to = new Date(now.absence.atMs).toISOString();
      last.end = "vanished-in-gap";
    }
    const streams = [...new Set(history.map(h => h.streamId))];
    for (const r of ranges) {
      const range = {
        fromMs: Date.parse(r.from),
        toMs: r.to === null ? Infinity : Date.parse(r.to),
      };
      const gaps = streams.flatMap(gapsOf).filter(g => gapOverlaps(g, range));
      touched.push(...gaps);
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
  const next = examined < candidates.length ? (candidates[examined - 1]?.key ?? null) : null;
  const uncertain = hits.some(h => h.ranges.some(r => r.uncertain));
  if (uncertain) warnings.push(warn.rangesUncertain());
  return answer({ hits, next }, coverageOf(touched, pruned, !uncertain), warnings);
}
