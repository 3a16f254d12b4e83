import type { DownWindow, JournalView, PointInTime } from "../journal";
import { answer, coverageOf, type Answer, type UnrecordedInfo } from "./answer";
import { parseTime, provenanceOf } from "./provenance";
import { kindOfStream, soleStream } from "./resolve";
import type { At, MaterializedObject } from "./types";
import {
  describeAbsence,
  describeDownWindow,
  describeGap,
  describeUnrecorded,
  objectLabel,
  warn,
} from "./warnings";

/** Which object: by kind, or by the stream (resource) that recorded it. */
export interface ObjectRef {
  kind?: string;
  streamId?: string;
  group?: string;
  namespace: string;
  name: string;
}

/** An object at a point, or null with the reason in the answer's warnings. */
export interface ObjectAtData {
  exists: boolean;
  object: MaterializedObject | null;
}

/**
 * The object as it stood at a time or resourceVersion, with its provenance. Inside a gap, before
 * pruned history or after a delete the answer says so instead of guessing.
 */
export function objectAt(
  view: JournalView,
  clusterId: string,
  ref: ObjectRef,
  at: At,
): Answer<ObjectAtData> {
  let kind = ref.kind;
  if (!kind) {
    if (!ref.streamId) throw new Error("objectAt needs a kind or a stream");
    kind = kindOfStream(view, ref.streamId);
  }
  const sel = { clusterId, kind, namespace: ref.namespace, name: ref.name, group: ref.group };
  if (sel.group === undefined) delete sel.group;
  let point: PointInTime;
  let streamForRv = "";
  if ("time" in at) {
    point = { time: new Date(parseTime(at.time)).toISOString() };
  } else {
    streamForRv = at.streamId ?? ref.streamId ?? soleStream(view, clusterId, sel);
    point = { resourceVersion: at.resourceVersion, streamId: streamForRv };
  }
  const res = view.objectAt(sel, point);
  const label = objectLabel(kind, ref.namespace, ref.name);
  const warnings: string[] = [];
  if (res.rvNotRecorded && "resourceVersion" in at) {
    warnings.push(warn.rvNotRecorded(at.resourceVersion, streamForRv));
    return answer({ exists: false, object: null }, coverageOf([], res.prunedBefore), warnings);
  }
  if (res.matchingGroups > 1) warnings.push(warn.severalGroups(label, res.matchingGroups));
  if (res.prunedBefore) warnings.push(warn.pruned(res.prunedBefore));
  for (const g of res.gaps) warnings.push(describeGap(g));
  if (res.absence) warnings.push(describeAbsence(label, res.absence));
  if (res.inGap && res.exists) warnings.push(warn.lastKnownBeforeGap());
  // Whether the streams the answer rests on were being recorded at a time point: the object's own
  // stream, or every stream of its kind when it was never seen there.
  const unrecorded: UnrecordedInfo[] = [];
  let down: DownWindow[] = res.downWindows;
  if ("time" in point) {
    const pointMs = Date.parse(point.time);
    const streams = res.streamId
      ? [res.streamId]
      : view
          .streams()
          .filter(s => s.key.clusterId === clusterId)
          .filter(s => s.key.namespace === "" || s.key.namespace === ref.namespace)
          .filter(s => view.kindsOfStream(s.streamId).includes(kind))
          .map(s => s.streamId);
    if (!res.streamId)
      down = streams.flatMap(id => view.downWindows(id, { fromMs: pointMs, toMs: pointMs }));
    for (const id of streams) {
      const c = view.coverageAt(id, pointMs);
      if (!c || c.state === "available") continue;
      unrecorded.push({ streamId: id, state: c.state, reason: c.reason });
      warnings.push(describeUnrecorded(id, c));
    }
    if (res.exists && unrecorded.length > 0) warnings.push(warn.lastKnownBeforeStop());
  }
  for (const w of down) warnings.push(describeDownWindow(w));
  if (!res.record && warnings.length === 0) warnings.push(warn.neverRecordedAt(label));
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
  return answer(
    { exists: res.exists, object },
    coverageOf(res.gaps, res.prunedBefore, true, { downWindows: down, unrecorded }),
    warnings,
  );
}
