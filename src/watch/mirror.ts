/** The coalesced checkpoint mirror: what it last wrote, so unchanged watermarks cost nothing. */
export interface MirrorState {
  last: string | null;
}

/** Decides what one mirror tick writes: the whole watermark map as one value, or nothing if unchanged. */
export function mirrorTick(state: MirrorState, watermarks: Record<string, string>): string | null {
  const sorted = Object.fromEntries(
    Object.entries(watermarks).sort(([a], [b]) => a.localeCompare(b)),
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
