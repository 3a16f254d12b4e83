import type { Journal } from "../journal/types";
import { attributeChanges } from "./attribution";
import { coverageAt, describeGap, gapSpans, streamsFor, type GapSpan } from "./coverage";
import { fieldDiff } from "./field-diff";
import { withoutServerFields } from "./normalize";
import { parseTime, provenanceOf } from "./provenance";
import { JournalReader, type ObjectPosition } from "./reader";
import type { DiffResult, ObjectDiff } from "./types";

export interface DiffOptions {
  namespace?: string;
  /** Report status changes too (off by default: controllers rewrite status all the time). */
  includeStatus?: boolean;
}

function sameHash(a: ObjectPosition, b: ObjectPosition): boolean {
  const x = a.row.hash;
  const y = b.row.hash;
  if (x === null || y === null) return false;
  if (typeof x === "string" || typeof y === "string") return x === y;
  return x.equals(y);
}

function spanTouches(g: GapSpan, fromMs: number, toMs: number): boolean {
  return g.fromMs < toMs && (g.toMs === null || g.toMs > fromMs);
}

/**
 * Lists the objects added, removed and changed between two times, with field changes (server
 * metadata ignored) attributed to their field managers; gaps in between set hasGaps and warn.
 */
export function diff(
  journal: Journal,
  clusterId: string,
  before: string,
  after: string,
  opts: DiffOptions = {},
): DiffResult {
  const b = parseTime(before, "before");
  const a = parseTime(after, "after");
  if (a < b) throw new Error(`after (${after}) is earlier than before (${before})`);
  const reader = new JournalReader(journal.path);
  try {
    const streams = streamsFor(journal, clusterId, opts.namespace);
    const streamIds = new Set(streams.map(s => s.streamId));
    const warnings: string[] = [];
    let hasGaps = false;
    for (const [label, ms] of [
      ["before", b],
      ["after", a],
    ] as const) {
      for (const s of coverageAt(journal, reader, streams, ms).streams) {
        if (!s.baselinePresent || !s.available) {
          hasGaps = true;
          for (const r of s.reasons) warnings.push(`${label}: ${s.streamId}: ${r}`);
        }
      }
    }
    for (const s of streams) {
      for (const g of gapSpans(journal, reader, s.streamId)) {
        if (spanTouches(g, b, a)) {
          hasGaps = true;
          warnings.push(describeGap(g));
        }
      }
    }
    if (streams.length === 0) warnings.push(`cluster ${clusterId} has no recorded streams`);
    const pruned = reader.prunedBefore();
    if (pruned && b < Date.parse(pruned)) {
      hasGaps = true;
      warnings.push(`history before ${pruned} was pruned; the earlier side may be incomplete`);
    }

    const objects: ObjectDiff[] = [];
    for (const identity of reader.objects(clusterId, opts.namespace)) {
      const pb = reader.positionAt(identity, b);
      const pa = reader.positionAt(identity, a);
      const inScope = (p: ObjectPosition | null) => p !== null && streamIds.has(p.streamId);
      const was = inScope(pb) && pb!.exists;
      const is = inScope(pa) && pa!.exists;
      if (!was && !is) continue;
      const base = { kind: identity.kind, group: identity.group, namespace: identity.namespace };
      const entry = { ...base, name: identity.name };
      if (was && is) {
        if (pb!.row.seq === pa!.row.seq || sameHash(pb!, pa!)) continue;
        const rb = reader.record(pb!);
        const ra = reader.record(pa!);
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
        const ra = reader.header(pa!);
        objects.push({
          ...entry,
          change: "added",
          before: null,
          after: provenanceOf(ra),
          changes: [],
        });
      } else {
        const rb = reader.header(pb!);
        objects.push({
          ...entry,
          change: "removed",
          before: provenanceOf(rb),
          after: null,
          changes: [],
        });
      }
    }
    return {
      clusterId,
      namespace: opts.namespace ?? null,
      before: new Date(b).toISOString(),
      after: new Date(a).toISOString(),
      objects,
      hasGaps,
      warnings,
    };
  } finally {
    reader.close();
  }
}
