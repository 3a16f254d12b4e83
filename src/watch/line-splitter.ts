/**
 * Splits a byte stream into newline-terminated lines. Bytes are kept until a newline arrives, so a
 * line torn across chunks, even inside a multi-byte UTF-8 character, decodes correctly.
 */
export class LineSplitter {
  private parts: Buffer[] = [];
  private pendingBytes = 0;

  constructor(private readonly maxLineBytes = 64 * 1024 * 1024) {}

  /** Feeds one chunk and returns the complete, non-empty lines it finished. */
  push(chunk: Buffer | string): string[] {
    const buf = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk;
    const lines: string[] = [];
    let start = 0;
    for (let nl = buf.indexOf(10, start); nl >= 0; nl = buf.indexOf(10, start)) {
      const piece = buf.subarray(start, nl);
      const line =
        this.parts.length === 0
          ? piece.toString("utf8")
          : Buffer.concat([...this.parts, piece]).toString("utf8");
      this.parts = [];
      this.pendingBytes = 0;
      const trimmed = line.endsWith("\r") ? line.slice(0, -1) : line;
      if (trimmed.trim() !== "") lines.push(trimmed);
      start = nl + 1;
    }
    if (start < buf.length) {
      // Copy: the caller's chunk buffer may be reused by the HTTP layer.
      this.parts.push(Buffer.from(buf.subarray(start)));
      this.pendingBytes += buf.length - start;
      if (this.pendingBytes > this.maxLineBytes) {
        throw new Error(`watch line longer than ${this.maxLineBytes} bytes without a newline`);
      }
    }
    return lines;
  }

  /** Bytes of an unfinished line; non-zero at end of stream means the last event was cut. */
  get pending(): number {
    return this.pendingBytes;
  }

  /** The unfinished tail as text (a final line the server did not terminate). */
  takeRest(): string {
    const rest = Buffer.concat(this.parts).toString("utf8");
    this.parts = [];
    this.pendingBytes = 0;
    return rest;
  }
}
