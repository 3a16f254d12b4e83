import { existsSync, statSync } from "node:fs";
import type Database from "better-sqlite3";
import type { JournalRecord } from "../../event";
import { toJournalError } from "../errors";
import { fsckSteps, runFsck, runTailCheck } from "../maintain/fsck";
import { decodeRow, type Meta } from "../store/rows";
import { REMOVALS_KEY } from "../store/removals";
import { TYPE_CODES } from "../store/schema";
import type { BodyRow, Store } from "../store/store";
import {
  JournalError,
  type BaselineMark,
  type ChangeKey,
  type ChangeMatch,
  type ChangeSearch,
  type RecordedChange,
  type CoverageState,
  type DownWindow,
  type EventPage,
  type EventQuery,
  type FsckReport,
  type GapWindow,
  type JournalView,
  type ObjectAtResult,
  type ObjectIdentity,
  type ObjectPosition,
  type ObjectSelector,
  type PointInTime,
  type PositionFilter,
  type StreamInfo,
  type StreamPosition,
  type TimeRange,
} from "../types";
import { downWindows } from "./down-windows";
import { gapsWithWindows, gapWindows } from "./gaps";
import {
  findIdentities,
  identities,
  identityPage,
  kindsOf,
  kindsOfStream,
  streamsOfObject,
} from "./identities";
import { objectAt } from "./object-at";
import {
  latestAtTime,
  latestHeaderAtTime,
  positionOf,
  rowOfPosition,
  type StoredPosition,
} from "./positions";
import { queryEvents } from "./events";
import { controlRecords, objectHistory, objectVersionSeqs, objectVersionsBetween } from "./history";
import { listStreams } from "./streams";
import { objectMark } from "./object-mark";
import { ChangeFinder, correlationsOf } from "./audit";

const BASELINE = TYPE_CODES.indexOf("baseline");
const CHECKPOINT = TYPE_CODES.indexOf("checkpoint");
const COVERAGE = TYPE_CODES.indexOf("coverage_change");

/**
 * The read side of the journal over one connection: a view of its own (openJournalView), or the
 * writer's connection (the writer extends this class). Caches built from rows are dropped when
 * the file changes, so a view stays correct however long it lives.
 */
export class SqliteView implements JournalView {
  protected closed = false;
  /** Commits made through this connection; data_version only counts other connections'. */
  protected localWrites = 0;
  private seen = -1;
  private readonly markCache = new Map<string, BaselineMark[]>();
  private readonly stmt;

  constructor(
    readonly path: string,
    protected readonly db: Database.Database,
    protected readonly store: Store,
  ) {
    this.stmt = {
      dataVersion: db.prepare("PRAGMA data_version").pluck(),
      // Control rows (baseline markers, checkpoints) are indexed by (type, stream, seq).
      controlPosition: db.prepare(
        "SELECT rv, seq, observed_at FROM records WHERE object IS NULL AND type IN (?,?) AND stream=? AND rv IS NOT NULL AND observed_at<=? ORDER BY seq DESC LIMIT 1",
      ),
      lastControl: db.prepare(
        "SELECT meta FROM records WHERE object IS NULL AND type=? AND stream=? AND observed_at<=? ORDER BY seq DESC LIMIT 1",
      ),
      marks: db.prepare(
        "SELECT seq, observed_at, rv FROM records WHERE object IS NULL AND type=? AND stream=? ORDER BY seq",
      ),
      prunedBefore: db.prepare("SELECT value FROM meta WHERE key='pruned_before'").pluck(),
      removals: db.prepare(`SELECT value FROM meta WHERE key='${REMOVALS_KEY}'`).pluck(),
      controlRv: db.prepare(
        "SELECT 1 FROM records WHERE object IS NULL AND stream=? AND rv=? AND rv IS NOT NULL LIMIT 1",
      ),
      anyRv: db.prepare("SELECT 1 FROM records WHERE stream=? AND rv=? LIMIT 1"),
      count: db.prepare("SELECT count(*) FROM records").pluck(),
    };
  }

  /** Throws once closed. */
  protected open(): void {
    if (this.closed) throw new JournalError(`journal ${this.path} is closed`, "CLOSED");
  }

  /** For a read: throws once closed; drops row-derived caches when the file changed since the last read. */
  protected live(): void {
    this.open();
    const v = (this.stmt.dataVersion.get() as number) + this.localWrites;
    if (v === this.seen) return;
    this.seen = v;
    this.markCache.clear();
    this.store.registry.refreshStreams();
  }

  streams(): StreamInfo[] {
    this.live();
    return listStreams(this.store);
  }

  events(query: EventQuery): EventPage {
    this.live();
    return queryEvents(this.store, query);
  }

  objectHistory(sel: ObjectSelector): JournalRecord[] {
    this.live();
    return objectHistory(this.store, sel);
  }

  objectVersionSeqs(sel: ObjectSelector): number[] {
    this.live();
    return objectVersionSeqs(this.store, sel);
  }

  objectVersionsBetween(sel: ObjectSelector, fromSeq: number, toSeq: number): JournalRecord[] {
    this.live();
    return objectVersionsBetween(this.store, sel, fromSeq, toSeq);
  }

  consistentRead<T>(fn: () => T): T {
    this.live();
    return this.store.buckets.withPinnedRange(fn);
  }

  objectMark(sel: ObjectSelector, streamIds: readonly string[]): string {
    this.live();
    return `${objectMark(this.store, sel, streamIds)}:${this.prunedHorizon() ?? ""}`;
  }

  objectAt(sel: ObjectSelector, at: PointInTime): ObjectAtResult {
    this.live();
    return objectAt(this.store, sel, at, this.prunedHorizon(), id => this.marks(id));
  }

  baselines(streamId?: string): JournalRecord[] {
    this.live();
    return controlRecords(this.store, "baseline", streamId);
  }

  gaps(streamId?: string): JournalRecord[] {
    this.live();
    return gapsWithWindows(this.store, streamId).map(g => g.record);
  }

  gapWindows(streamId?: string, during?: TimeRange): GapWindow[] {
    this.live();
    return gapWindows(this.store, streamId, during);
  }

  hasResourceVersion(streamId: string, rv: string): boolean {
    this.live();
    const s = this.store.registry.streamsById.get(streamId);
    if (!s) return false;
    // Checkpoints and markers are indexed by (stream, rv); object rows need a scan, which only a
    // start-up check against the Store mirror asks for.
    if (this.stmt.controlRv.get(s.id, rv)) return true;
    return this.stmt.anyRv.get(s.id, rv) !== undefined;
  }

  downWindows(streamId?: string, during?: TimeRange): DownWindow[] {
    this.live();
    return downWindows(this.store, streamId, during);
  }

  snapshots(): JournalRecord[] {
    this.live();
    return controlRecords(this.store, "snapshot");
  }

  prunedBefore(): string | null {
    this.live();
    return this.prunedHorizon();
  }

  changeMark(): number {
    this.live();
    return this.seen;
  }

  removals(): number {
    this.open();
    return Number((this.stmt.removals.get() as string | undefined) ?? 0);
  }

  private prunedHorizon(): string | null {
    return (this.stmt.prunedBefore.get() as string | undefined) ?? null;
  }

  baselineMarks(streamId: string): BaselineMark[] {
    this.live();
    return this.marks(streamId);
  }

  private marks(streamId: string): BaselineMark[] {
    const hit = this.markCache.get(streamId);
    if (hit) return hit;
    const s = this.store.registry.streamsById.get(streamId);
    const rows = s
      ? (this.stmt.marks.all(BASELINE, s.id) as { seq: number; observed_at: number; rv: string }[])
      : [];
    const marks = rows.map(r => ({
      seq: r.seq,
      observedAtMs: r.observed_at,
      listResourceVersion: r.rv,
    }));
    this.markCache.set(streamId, marks);
    return marks;
  }

  coverageAt(streamId: string, atMs: number): CoverageState | null {
    this.live();
    const s = this.store.registry.streamsById.get(streamId);
    if (!s) return null;
    const r = this.stmt.lastControl.get(COVERAGE, s.id, atMs) as
      | { meta: string | null }
      | undefined;
    if (!r?.meta) return null;
    return (JSON.parse(r.meta) as Meta).c ?? null;
  }

  streamPositionAt(
    streamId: string,
    atMs: number,
    positions: readonly ObjectPosition[] = [],
  ): StreamPosition | null {
    this.live();
    const s = this.store.registry.streamsById.get(streamId);
    if (!s) return null;
    let best = this.stmt.controlPosition.get(BASELINE, CHECKPOINT, s.id, atMs) as
      | { rv: string; seq: number; observed_at: number }
      | undefined;
    for (const p of positions) {
      if (p.streamId !== streamId || p.resourceVersion === null) continue;
      if (!best || p.seq > best.seq)
        best = { rv: p.resourceVersion, seq: p.seq, observed_at: p.observedAtMs };
    }
    if (!best) return null;
    return {
      resourceVersion: best.rv,
      seq: best.seq,
      observedAt: new Date(best.observed_at).toISOString(),
    };
  }

  objects(clusterId: string, namespace?: string): ObjectIdentity[] {
    this.live();
    return identities(this.store, clusterId, namespace);
  }

  findObjects(
    namePrefix: string,
    filter: { clusterId?: string; kind?: string } = {},
  ): (ObjectIdentity & { clusterId: string })[] {
    this.live();
    return findIdentities(this.store, namePrefix, filter);
  }

  kinds(clusterId: string): string[] {
    this.live();
    return kindsOf(this.store, clusterId);
  }

  kindsOfStream(streamId: string): string[] {
    this.live();
    return kindsOfStream(this.store, streamId);
  }

  streamsOfObject(identity: ObjectIdentity): string[] {
    this.live();
    return streamsOfObject(this.store, identity.id);
  }

  positionAt(identity: ObjectIdentity, atMs: number): ObjectPosition | null {
    this.live();
    return this.position(identity, atMs);
  }

  private position(identity: ObjectIdentity, atMs: number): StoredPosition | null {
    const row = latestAtTime(this.store, identity.id, atMs);
    if (!row) return null;
    return positionOf(this.store, identity, row, atMs, id => this.marks(id));
  }

  /** A position without its stored row (latestHeaderAtTime): record() cannot decode it. */
  private leanPosition(identity: ObjectIdentity, atMs: number): ObjectPosition | null {
    const row = latestHeaderAtTime(this.store, identity.id, atMs);
    if (!row) return null;
    const { row: _header, ...pos } = positionOf(this.store, identity, row, atMs, id =>
      this.marks(id),
    );
    return pos;
  }

  positionsAt(clusterId: string, atMs: number, filter: PositionFilter = {}): ObjectPosition[] {
    this.live();
    return this.positionsOf(identities(this.store, clusterId, filter.namespace), atMs, filter);
  }

  positionsPage(
    clusterId: string,
    atMs: number,
    page: { afterId: number; limit: number },
    filter: PositionFilter = {},
  ): { positions: ObjectPosition[]; next: number | null } {
    this.live();
    const ids = identityPage(this.store, clusterId, page.afterId, page.limit, filter.namespace);
    const positions = this.positionsOf(ids, atMs, filter, true);
    return { positions, next: ids.length < page.limit ? null : ids[ids.length - 1].id };
  }

  private positionsOf(
    ids: readonly ObjectIdentity[],
    atMs: number,
    filter: PositionFilter,
    lean = false,
  ): ObjectPosition[] {
    return this.store.buckets.withPinnedRange(() => {
      const out: ObjectPosition[] = [];
      for (const identity of ids) {
        if (filter.kinds && !filter.kinds.has(identity.kind)) continue;
        const pos = lean ? this.leanPosition(identity, atMs) : this.position(identity, atMs);
        if (!pos) continue;
        if (filter.streamIds && !filter.streamIds.has(pos.streamId)) continue;
        out.push(pos);
      }
      return out;
    });
  }

  record(pos: ObjectPosition): JournalRecord {
    this.live();
    return this.recordAt(pos);
  }

  private recordAt(pos: ObjectPosition, keyframes?: Map<number, BodyRow>): JournalRecord {
    const row = rowOfPosition(pos);
    const object = row.body
      ? this.store.versions.objectOfRow(pos.identity.id, row, keyframes)
      : undefined;
    return decodeRow(this.store, { ...row, body: null }, object);
  }

  records(positions: readonly ObjectPosition[]): JournalRecord[] {
    this.live();
    const bases: number[] = [];
    for (const p of positions) {
      const base = rowOfPosition(p).base;
      if (base !== null) bases.push(base);
    }
    const keyframes = this.store.versions.keyframeRows(bases);
    return positions.map(p => this.recordAt(p, keyframes));
  }

  header(pos: ObjectPosition): JournalRecord {
    this.live();
    return decodeRow(this.store, { ...rowOfPosition(pos), body: null });
  }

  sameContent(a: ObjectPosition, b: ObjectPosition): boolean {
    const x = rowOfPosition(a).hash;
    const y = rowOfPosition(b).hash;
    if (x === null || y === null) return false;
    if (typeof x === "string" || typeof y === "string") return x === y;
    return x.equals(y);
  }

  findChanges(keys: readonly ChangeKey[], search: ChangeSearch): (ChangeMatch | null)[] {
    this.live();
    const finder = new ChangeFinder(this.store);
    return this.store.buckets.withPinnedRange(() => keys.map(k => finder.find(k, search)));
  }

  auditCorrelations(changes: readonly RecordedChange[]): JournalRecord[][] {
    this.live();
    return correlationsOf(this.store, changes);
  }

  fsck(): FsckReport {
    this.live();
    return runFsck(this.store);
  }

  *fsckSteps(): Generator<number, FsckReport, void> {
    this.live();
    try {
      return yield* fsckSteps(this.store);
    } catch (err) {
      // A damaged page makes SQLite throw; callers see it typed (CORRUPT) like every journal error.
      throw toJournalError(err, `check ${this.path}`);
    }
  }

  /** The bounded start-up check (runTailCheck) over the newest rows. */
  tailCheck(rows: number): FsckReport {
    this.live();
    return runTailCheck(this.store, rows);
  }

  sizeBytes(): number {
    this.live();
    let total = 0;
    for (const p of [this.path, `${this.path}-wal`]) {
      if (existsSync(p)) total += statSync(p).size;
    }
    return total;
  }

  recordCount(): number {
    this.live();
    return this.stmt.count.get() as number;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.db.close();
  }
}
