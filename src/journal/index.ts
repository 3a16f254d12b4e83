// The journal's front door: everything outside src/journal imports from here and nowhere else.
export { openJournal, openJournalView, salvageJournal } from "./journal";
export * from "./types";
export { overlaps as gapOverlaps } from "./read/gaps";
export { backupJournal, type BackupOptions, type BackupResult } from "./maintain/backup";
export {
  openReplayStore,
  type ReplayStore,
  type StoredPlan,
  type StoredRun,
} from "./plans/replay-store";
export { isRecordFault } from "./errors";
// Benchmarks give their raw SQLite baseline the same page size and cache as the journal.
export { CONNECTION_DEFAULTS } from "./store/connection";
// The native addon the image builds (KRPLY_SQLITE_BINDING), set once per process and worker thread.
export { nativeBindingInUse, useNativeBinding } from "./store/connection";
// bench/diff.ts times the append's diff of a version against its keyframe on its own.
export { diffTuplesOmittingRv as diffAgainstKeyframe } from "./codec/delta";
// The writer thread's parts, for the tests that drive it directly (test/support/writer-thread-fixtures.ts).
export { WriterThread, WriterThreadError, type WriterThreadOptions } from "./write/writer-thread";
export { TxnBuilder } from "./write/txn-pack";
export type { TxnExpect } from "./write/txn-format";
