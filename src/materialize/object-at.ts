import type { Journal } from "../journal/types";
import { parseTime, provenanceOf } from "./provenance";
import { JournalReader } from "./reader";
import type { At, MaterializedObject } from "./types";

/** Which object: by kind, or by the stream (resource) that recorded it. */
export interface ObjectRef {
  kind?: string;
  streamId?: string;
  group?: string;
  namespace: string;
  name: string;
}

/** An object at a point, or an honest account of why it cannot be shown. */
export interface ObjectAtAnswer {
  exists: boolean;
  object: MaterializedObject | null;
  inGap: boolean;
  prunedBefore: string | null;
  warnings: string[];
}

function resolveKind(reader: JournalReader, ref: ObjectRef): string {
  if (ref.kind) return ref.kind;
  if (!ref.streamId) throw new Error("objectAt needs a kind or a stream");
  const kinds = reader.kindsOfStream(ref.streamId);
  if (kinds.length !== 1) {
    throw new Error(
      `stream ${ref.streamId} recorded ${kinds.length === 0 ? "no objects" : `kinds ${kinds.join(", ")}`}; pass a kind`,
    );
  }
  return kinds[0];
}

/**
 * The object as it stood at a time or resourceVersion, with its provenance. Inside a gap, before
 * pruned history or after a delete the answer says so instead of guessing.
 */
export function objectAt(
  journal: Journal,
  clusterId: string,
  ref: ObjectRef,
  at: At,
): ObjectAtAnswer {
  const reader = new JournalReader(journal.path);
  try {
    const kind = resolveKind(reader, ref);
    const sel = { clusterId, kind, namespace: ref.namespace, name: ref.name, group: ref.group };
    if (sel.group === undefined) delete sel.group;
    let point: Parameters<Journal["objectAt"]>[1];
    if ("time" in at) {
      point = { time: new Date(parseTime(at.time)).toISOString() };
    } else {
      const streamId = at.streamId ?? ref.streamId ?? soleStream(reader, clusterId, sel);
      point = { resourceVersion: at.resourceVersion, streamId };
    }
    const res = journal.objectAt(sel, point);
    const warnings = [...res.warnings];
    if (res.inGap && res.exists) {
      warnings.push(
        "the object shown is the last version known before the gap; it may have changed",
      );
    }
    if (!res.record && !res.warnings.length) {
      warnings.push(
        `no record of ${kind} ${ref.namespace ? `${ref.namespace}/` : ""}${ref.name} at or before that point`,
      );
    }
    const object =
      res.exists && res.record?.object && res.record.resource
        ? {
            kind: res.record.resource.kind,
            group: res.record.resource.group,
            namespace: res.record.resource.namespace,
            name: res.record.resource.name,
            object: res.record.object as Record<string, unknown>,
            provenance: provenanceOf(res.record),
          }
        : null;
    return {
      exists: res.exists,
      object,
      inGap: res.inGap,
      prunedBefore: res.prunedBefore,
      warnings,
    };
  } finally {
    reader.close();
  }
}

function soleStream(
  reader: JournalReader,
  clusterId: string,
  sel: { kind: string; namespace: string; name: string; group?: string },
): string {
  const ids = reader
    .objects(clusterId, sel.namespace)
    .filter(o => o.kind === sel.kind && o.name === sel.name)
    .filter(o => sel.group === undefined || o.group === sel.group);
  const streams = [...new Set(ids.flatMap(o => reader.streamsOfObject(o.id)))];
  if (streams.length !== 1) {
    throw new Error(
      `a resourceVersion is only meaningful within one stream; ${sel.kind} ${sel.name} was recorded on ${streams.length} streams, pass one`,
    );
  }
  return streams[0];
}
