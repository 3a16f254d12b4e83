/**
 * Splits bytes into newline-terminated lines with a bound: a line longer than maxLineBytes is never
 * buffered whole. Its bytes are dropped as they arrive until its newline, and it is counted once.
 */
export class BoundedLines {
  private parts: Buffer[] = [];
  private pendingBytes = 0;
  private skipping = false;
  /** Lines dropped for being longer than the bound. */
  huge = 0;

  constructor(private readonly maxLineBytes: number) {}

  /** Feeds one chunk (which the caller may reuse afterwards) and returns the lines it finished. */
  push(buf: Buffer, out: string[] = []): string[] {
    let start = 0;
    while (start < buf.length) {
      const nl = buf.indexOf(10, start);
      if (this.skipping) {
        if (nl < 0) return out;
        this.skipping = false;
        start = nl + 1;
        continue;
      }
      if (nl < 0) {
        this.pendingBytes += buf.length - start;
        if (this.pendingBytes > this.maxLineBytes) this.drop();
        else this.parts.push(Buffer.from(buf.subarray(start)));
        return out;
      }
      const len = this.pendingBytes + (nl - start);
      if (len > this.maxLineBytes) {
        this.parts = [];
        this.pendingBytes = 0;
        this.huge++;
      } else {
        const line =
          this.parts.length === 0
            ? buf.toString("utf8", start, nl)
            : Buffer.concat([...this.parts, buf.subarray(start, nl)]).toString("utf8");
        this.parts = [];
        this.pendingBytes = 0;
        const trimmed = line.endsWith("\r") ? line.slice(0, -1) : line;
        if (trimmed.length > 0 && trimmed.trim() !== "") out.push(trimmed);
      }
      start = nl + 1;
    }
    return out;
  }

  private drop(): void {
    this.parts = [];
    this.pendingBytes = 0;
    this.skipping = true;
    this.huge++;
  }

  /** Bytes of an unfinished line. */
  get pending(): number {
    return this.pendingBytes;
  }

  /** The unfinished tail as a line (a file that ended without a newline), or null. */
  takeRest(): string | null {
    if (this.skipping) {
      this.skipping = false;
      return null;
    }
    const rest = Buffer.concat(this.parts).toString("utf8");
    this.parts = [];
    this.pendingBytes = 0;
    return rest.trim() === "" ? null : rest;
  }
}
