/** Polls ok() every half second until it holds; throws, naming what it waited for, after timeoutMs. */
export async function until(
  what: string,
  ok: () => Promise<boolean>,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise(r => setTimeout(r, 500));
  }
}
