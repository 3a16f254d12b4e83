// Waiting for something another process does: a probe polled until it answers.

/**
 * Polls probe every 250 ms until it returns something other than undefined, and returns that; a
 * probe that throws has not answered yet. After timeoutMs it fails, naming what it waited for, the
 * last error, and the tail of detail() (a child's log, say).
 */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = 60_000,
  detail?: () => string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    await new Promise(r => setTimeout(r, 250));
  }
  throw new Error(
    `timed out waiting for ${what}${last ? `: ${String(last)}` : ""}` +
      (detail ? `\n${detail().slice(-4000)}` : ""),
  );
}
