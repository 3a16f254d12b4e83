import type { GapWindow, JournalView, ObjectPosition } from "../journal";
import { answer, coverageOf, type Answer } from "./answer";
import { attributeChanges } from "./attribution";
import { coverageAt, streamsFor } from "./coverage";
import { fieldDiff } from "./field-diff";
import { withoutServerFields } from "./normalize";
import { parseTime, provenanceOf } from "./provenance";
import type { DiffResult, ObjectDiff } from "./types";
import { describeGap, warn } from "./warnings";

export interface DiffOptions {
  namespace?: string;
  /** Report status changes too (off by default: controllers rewrite status all the time). */
  includeStatus?: boolean;
}

/**
 * Lists the objects added, removed and changed between two times, with field changes (server
 * metadata ignored) attributed to their field managers; gaps in between set hasGaps and warn.
 */
export function diff(
  view: JournalView,
  clusterId: string,
  before: string,
  after: string,
  opts: DiffOptions = {},
): Answer<DiffResult> {
  const b = parseTime(before, "before");
  const a = parseTime(after, "after");
  if (a < b) throw new Error(`after (${after}) is earlier than before (${before})`);
  const streams = streamsFor(view, clusterId, opts.namespace);
  const streamIds = new Set(streams.map(s => s.streamId));
  const warnings: string[] = [];
  let hasGaps = false;
  for (const [label, ms] of [
    ["before", b],
    ["after", a],
  ] as const) {
    for (const s of coverageAt(view, streams, ms).streams) {
      if (!s.baselinePresent || !s.available) {
        hasGaps = true;
        for (const r of s.reasons) warnings.push(`${label}: ${s.streamId}: ${r}`);
      }
    }
  }
  const gaps: GapWindow[] = [];
  for (const s of streams) {
    for (const g of view.gapWindows(s.streamId, { fromMs: b, toMs: a })) {
      hasGaps = true;
      gaps.push(g);
      warnings.push(describeGap(g));
    }
  }
  if (streams.length === 0) warnings.push(warn.noStreams(clusterId));
  const horizon = view.prunedBefore();
  const pruned = horizon && b < Date.parse(horizon) ? horizon : null;
  if (pruned) {
    hasGaps = true;
    warnings.push(warn.prunedEarlierSide(pruned));
  }

  const objects: ObjectDiff[] = [];
  for (const identity of view.objects(clusterId, opts.namespace)) {
    const pb = view.positionAt(identity, b);
    const pa = view.positionAt(identity, a);
    const inScope = (p: ObjectPosition | null) => p !== null && streamIds.has(p.streamId);
    const was = inScope(pb) && pb!.exists;
    const is = inScope(pa) && pa!.exists;
    if (!was && !is) continue;
    const base = { kind: identity.kind, group: identity.group, namespace: identity.namespace };
    const entry = { ...base, name: identity.name };
    if (was && is) {
      if (pb!.seq === pa!.seq || view.sameContent(pb!, pa!)) continue;
      const rb = view.record(pb!);
      const ra = view.record(pa!);
      const ob = withoutServerFields(rb.object as Record<string, unknown>, opts);
      const oa = withoutServerFields(ra.object as Record<string, unknown>, opts);
      const changes = fieldDiff(ob, oa);
      if (changes.length === 0) continue;
      objects.push({
        ...entry,
        change: "changed",
        before: provenanceOf(rb),
        after: provenanceOf(ra),
        changes: attributeChanges(changes, rb.object, ra.object),
      });
    } else if (is) {
      objects.push({
        ...entry,
        change: "added",
        before: null,
        after: provenanceOf(view.header(pa!)),
        changes: [],
      });
    } else {
      objects.push({
        ...entry,
        change: "removed",
        before: provenanceOf(view.header(pb!)),
        after: null,
        changes: [],
      });
    }
  }
  const data: DiffResult = {
    clusterId,
    namespace: opts.namespace ?? null,
    before: new Date(b).toISOString(),
    after: new Date(a).toISOString(),
    objects,
    hasGaps,
  };
  return answer(data, coverageOf(gaps, pruned, !hasGaps), warnings);
}
