import type { JournalRecord } from "../../event";
import { openJournal, openJournalView, type Journal, type JournalView } from "../../journal";
import {
  changesByActor,
  diff,
  journalStatus,
  objectAt,
  recordSnapshot,
  resolveCluster,
  resolveKind,
  searchPage,
  snapshot,
  storedSnapshots,
  streamReports,
  timelinePage,
  type SearchHit,
  type SearchKey,
  type TimelineEntry,
} from "../../materialize";
import { SEARCH_PAGE, TIMELINE_PAGE, type Backend, type ExportQuery } from "./backend";
import { readAllPages } from "./pages";

const EXPORT_PAGE = 1000;

/**
 * Answers from a journal file: a read-only view for reads (it never creates or changes the file),
 * and the writer only for a recorded snapshot. The view opens on the first question.
 */
export class LocalBackend implements Backend {
  private view: JournalView | null = null;

  constructor(readonly where: string) {}

  private v(): JournalView {
    // The CLI reads once and exits, so a journal nobody has open is read as an immutable file:
    // nothing (no -wal or -shm) is created beside it, and a read-only directory works.
    this.view ??= openJournalView(this.where, { idleSnapshot: true });
    return this.view;
  }

  private withWriter<T>(body: (j: Journal) => T): T {
    // A reader's view of an idle journal is immutable and would not see this write: close it first.
    this.view?.close();
    this.view = null;
    const j = openJournal(this.where, { create: false });
    try {
      return body(j);
    } finally {
      j.close();
    }
  }

  async status(cluster?: string) {
    return journalStatus(this.v(), cluster);
  }

  async coverage(cluster?: string) {
    return streamReports(this.v(), cluster);
  }

  async timeline(q: Parameters<Backend["timeline"]>[0]) {
    const v = this.v();
    const cluster = resolveCluster(v, q.cluster);
    const kind = resolveKind(v, cluster, q.kind);
    const ref = { kind, namespace: q.namespace, name: q.name, group: q.group };
    return readAllPages<TimelineEntry, number>(after => {
      const page = timelinePage(v, cluster, ref, {
        includeStatus: q.includeStatus,
        limit: TIMELINE_PAGE,
        after,
      });
      return { answer: { ...page, data: page.data.entries }, next: page.data.next };
    });
  }

  async objectAt(q: Parameters<Backend["objectAt"]>[0]) {
    const v = this.v();
    const cluster = resolveCluster(v, q.cluster);
    const kind = resolveKind(v, cluster, q.kind);
    return objectAt(
      v,
      cluster,
      { kind, namespace: q.namespace, name: q.name, group: q.group },
      q.at,
    );
  }

  async diff(q: Parameters<Backend["diff"]>[0]) {
    const v = this.v();
    const cluster = resolveCluster(v, q.cluster);
    return diff(v, cluster, q.since, q.until, {
      namespace: q.namespace,
      includeStatus: q.includeStatus,
    });
  }

  async search(q: Parameters<Backend["search"]>[0]) {
    const v = this.v();
    const kind = q.kind ? resolveKind(v, resolveCluster(v, q.cluster), q.kind) : undefined;
    const query = {
      clusterId: q.cluster,
      kind,
      namePrefix: q.namePrefix,
      labelSelector: q.selector,
    };
    return readAllPages<SearchHit, SearchKey>(after => {
      const page = searchPage(v, query, { limit: SEARCH_PAGE, after });
      return { answer: { ...page, data: page.data.hits }, next: page.data.next };
    });
  }

  async who(q: Parameters<Backend["who"]>[0]) {
    const v = this.v();
    return changesByActor(v, resolveCluster(v, q.cluster), {
      namespace: q.namespace,
      since: q.since,
      until: q.until,
      limit: q.limit,
    });
  }

  async snapshot(q: Parameters<Backend["snapshot"]>[0]) {
    const take = (v: JournalView) =>
      snapshot(v, resolveCluster(v, q.cluster), q.at, q.name ?? `manual-${q.at}`, {
        withoutObjects: !q.objects,
      });
    // Taken through the view (which every commit is visible to), then stored by the writer: a
    // damaged journal is then reported the same way as by every other reader.
    const taken = take(this.v());
    if (!q.record) return taken;
    return this.withWriter(j => ({ ...taken, data: recordSnapshot(j, taken.data) }));
  }

  async snapshots(cluster?: string) {
    return storedSnapshots(this.v(), cluster);
  }

  async exportRecords(q: ExportQuery, onRecord: (r: JournalRecord) => void): Promise<number> {
    const v = this.v();
    let cursor: string | undefined;
    let n = 0;
    do {
      const page = v.events({
        clusterId: q.cluster,
        kind: q.kind ? resolveKind(v, resolveCluster(v, q.cluster), q.kind) : undefined,
        namespace: q.namespace,
        name: q.name,
        since: q.since,
        until: q.until,
        limit: EXPORT_PAGE,
        cursor,
      });
      for (const r of page.records) onRecord(r);
      n += page.records.length;
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    return n;
  }

  async close(): Promise<void> {
    this.view?.close();
    this.view = null;
  }
}
