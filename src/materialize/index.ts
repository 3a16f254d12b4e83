export * from "./types";
export {
  answer,
  coverageOf,
  gapInfo,
  downWindowInfo,
  joinPages,
  type Answer,
  type Coverage,
  type CoverageExtras,
  type DownWindowInfo,
  type GapInfo,
  type UnrecordedInfo,
} from "./answer";
export { objectAt, type ObjectRef, type ObjectAtData } from "./object-at";
export {
  snapshot,
  snapshotInSlices,
  recordSnapshot,
  listSnapshots,
  storedSnapshots,
  expiredSnapshots,
  snapshotObjects,
  type SnapshotOptions,
  type SnapshotSummary,
} from "./snapshot";
export { diff, type DiffOptions } from "./diff";
export {
  search,
  searchPage,
  existenceRanges,
  SEARCH_EXAMINED_PER_PAGE,
  type SearchKey,
  type SearchPage,
  type SearchQuery,
  type SearchHit,
  type ExistenceRange,
} from "./search";
export {
  timeline,
  timelinePage,
  type TimelineEntry,
  type TimelineOptions,
  type TimelinePage,
  type TimelineRef,
} from "./timeline";
export { fieldDiff, jsonEqual, type FieldChange } from "./field-diff";
export { actorOf, actorFromAudit, actorFromManagedFields, actorLabel, type Actor } from "./actor";
export { changesByActor, type ActorChanges, type ActorChange, type WhoQuery } from "./who";
export { attributeChange, attributeChanges, type Attribution } from "./attribution";
export { parseFieldsV1, parseFieldsV1Key, ownership } from "./fields-v1";
export { formatPath, parsePath, escapeKey, type PathSegment } from "./path";
export { withoutServerFields, SERVER_METADATA } from "./normalize";
export { coverageAt, streamsFor } from "./coverage";
export { describeGap, describeAbsence, describeDownWindow, OBSERVED_LATE } from "./warnings";
export { resolveCluster, resolveKind, kindMatches } from "./resolve";
export { streamReports, journalStatus, type StreamReport, type JournalStatus } from "./status";
export {
  nightlyConfigOf,
  runScheduledSnapshot,
  runScheduledSnapshotInSlices,
  catchUpDue,
  newestScheduled,
  type NightlyConfig,
  type NightlyResult,
} from "./nightly";
