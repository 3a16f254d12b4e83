import { z } from "zod";
import { parseStreamId } from "../event";

/** The coalesced checkpoint mirror: what it last wrote, so unchanged watermarks cost nothing. */
export interface MirrorState {
  last: string | null;
}

/** Decides what one mirror tick writes: the whole watermark map as one value, or nothing if unchanged. */
export function mirrorTick(state: MirrorState, watermarks: Record<string, string>): string | null {
  // Any fixed order makes equal maps equal text; code-unit order, since localeCompare loads ICU.
  const sorted = Object.fromEntries(
    Object.entries(watermarks).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  );
  const value = JSON.stringify({ v: 1, watermarks: sorted });
  if (value === state.last) return null;
  return value;
}

/**
 * Every `everyMs`, writes the watermarks through `write` when they changed. The journal stays the only
 * authority; this copy lets other pods see progress. Never per event: the Pepr Store batches patches
 * by value and drops writes on some failures (docs/adr/0001).
 */
export function startCheckpointMirror(
  source: () => Record<string, string>,
  write: (value: string) => void | Promise<void>,
  everyMs: number,
  onError: (err: unknown) => void,
): { tick(): Promise<void>; stop(): void } {
  const state: MirrorState = { last: null };
  const tick = async (): Promise<void> => {
    const value = mirrorTick(state, source());
    if (value === null) return;
    try {
      await write(value);
      state.last = value;
    } catch (err) {
      onError(err);
    }
  };
  const timer = setInterval(() => void tick(), everyMs);
  timer.unref();
  return { tick, stop: () => clearInterval(timer) };
}

const MirrorValueSchema = z.object({
  v: z.literal(1),
  watermarks: z.record(z.string(), z.string()),
});

/** The watermarks a mirror value holds; null for a missing or unreadable value (never throws). */
export function parseMirror(value: string | null | undefined): Record<string, string> | null {
  if (!value) return null;
  try {
    const parsed = MirrorValueSchema.safeParse(JSON.parse(value));
    return parsed.success ? parsed.data.watermarks : null;
  } catch {
    return null;
  }
}

/** What the start-up check needs to know about the journal. */
export interface JournalPositions {
  /** The stream's last durable RV, or undefined when the journal does not know the stream. */
  lastRv(streamId: string): string | null | undefined;
  /** Whether the stream holds a record at this RV. */
  hasResourceVersion(streamId: string, rv: string): boolean;
}

/** A stream whose history the journal lost: the mirror saw it further than the journal holds. */
export interface LostStream {
  streamId: string;
  mirroredRv: string;
  /** The journal's own last durable RV of the stream; null when it never held it. */
  journalRv: string | null;
}

/**
 * Streams of this cluster that the mirror saw recorded up to an RV the journal does not hold. The
 * journal is written before the mirror, so a healthy journal always holds every mirrored RV; one
 * that does not was replaced, recreated empty or restored from an older backup.
 */
export function lostStreams(
  watermarks: Record<string, string>,
  clusterId: string,
  journal: JournalPositions,
): LostStream[] {
  const out: LostStream[] = [];
  for (const [streamId, mirroredRv] of Object.entries(watermarks)) {
    let cluster: string;
    try {
      cluster = parseStreamId(streamId).clusterId;
    } catch {
      continue;
    }
    if (cluster !== clusterId) continue;
    const last = journal.lastRv(streamId);
    if (last === mirroredRv) continue;
    if (last !== undefined && last !== null && journal.hasResourceVersion(streamId, mirroredRv))
      continue;
    out.push({ streamId, mirroredRv, journalRv: last ?? null });
  }
  return out;
}
