import type { JournalRecord } from "../../event";
import type {
  Answer,
  At,
  DiffResult,
  JournalStatus,
  ObjectAtData,
  ActorChanges,
  SearchHit,
  Snapshot,
  SnapshotSummary,
  StreamReport,
  TimelineEntry,
} from "../../materialize";

/** Versions per history page when a timeline is read page by page (the sidecar's most per page). */
export const TIMELINE_PAGE = 1000;
/** Hits per search page when a search is read page by page (the sidecar's most per page). */
export const SEARCH_PAGE = 500;

/** An object as a person names it: the kind as typed (deploy, Deployment), resolved by the backend. */
export interface ObjectQuery {
  cluster?: string;
  kind: string;
  namespace: string;
  name: string;
  group?: string;
}

/** An object at a point, as materialize answers it. */
export type ObjectAtAnswer = Answer<ObjectAtData>;

export interface DiffQuery {
  cluster?: string;
  namespace?: string;
  since: string;
  until: string;
  includeStatus: boolean;
}

export interface SearchQueryText {
  cluster?: string;
  kind?: string;
  namePrefix: string;
  selector?: string;
}

export interface SnapshotQuery {
  cluster?: string;
  at: string;
  name?: string;
  objects: boolean;
  /** Store the SNAPSHOT record (the local mode needs the journal's writer for it). */
  record: boolean;
}

export interface ExportQuery {
  cluster?: string;
  kind?: string;
  namespace?: string;
  name?: string;
  since?: string;
  until?: string;
}

export interface WhoQueryText {
  cluster?: string;
  namespace?: string;
  since: string;
  until?: string;
  limit: number;
}

/**
 * What every read command asks, whoever answers it: a local journal (view + materialize) or the
 * sidecar over HTTP. Both return materialize's Answer, so the commands print the same either way.
 */
export interface Backend {
  /** The journal file or server URL, for messages. */
  readonly where: string;
  status(cluster?: string): Promise<Answer<JournalStatus>>;
  coverage(cluster?: string): Promise<Answer<StreamReport[]>>;
  timeline(q: ObjectQuery & { includeStatus: boolean }): Promise<Answer<TimelineEntry[]>>;
  objectAt(q: ObjectQuery & { at: At }): Promise<ObjectAtAnswer>;
  diff(q: DiffQuery): Promise<Answer<DiffResult>>;
  search(q: SearchQueryText): Promise<Answer<SearchHit[]>>;
  /** Recorded changes in a window, grouped by actor (audit user, else field manager). */
  who(q: WhoQueryText): Promise<Answer<ActorChanges[]>>;
  snapshot(q: SnapshotQuery): Promise<Answer<Snapshot>>;
  snapshots(cluster?: string): Promise<Answer<SnapshotSummary[]>>;
  /** Streams records oldest first to onRecord; resolves with how many were sent. */
  exportRecords(q: ExportQuery, onRecord: (r: JournalRecord) => void): Promise<number>;
  close(): Promise<void>;
}
