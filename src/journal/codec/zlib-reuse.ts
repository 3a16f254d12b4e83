// Raw deflate/inflate on one long-lived zlib stream per direction.
//
// zlib.inflateRawSync builds a whole stream object (a Duplex, a native handle, an output buffer)
// for every call and tears it down again. For bodies the size of a keyframe that setup costs
// several times the inflate itself, and every keyframe a snapshot or a cache miss reads would pay
// it. Here one stream is driven through its native handle, as Node's own sync path does, and reset
// (which also re-primes the dictionary) between bodies. Those handle fields are not public API, so
// anything unexpected falls back to the one-shot functions, which stay correct. A reset keeps the
// window, and zlib's match search may look one byte past the input, so a reused stream can choose a
// different (equally valid) encoding than a fresh one: the promise is the round trip, not the bytes.
import {
  constants,
  createDeflateRaw,
  createInflateRaw,
  deflateRawSync,
  inflateRawSync,
  type ZlibOptions,
} from "node:zlib";

interface NativeHandle {
  writeSync(
    flush: number,
    input: Buffer,
    inOff: number,
    inLen: number,
    out: Buffer,
    outOff: number,
    outLen: number,
  ): void;
  onerror: (message: string, errno: number) => void;
}

interface Engine {
  _handle?: NativeHandle;
  _writeState?: Uint32Array;
  reset(): void;
  close(): void;
}

const OUT_CHUNK = 16 * 1024;

/** One reusable raw zlib stream; run() processes a whole body with Z_FINISH (exported for tests). */
export class ReusedStream {
  private engine: Engine | null = null;
  private usable = true;
  private failure: Error | null = null;
  private readonly scratch = Buffer.allocUnsafe(OUT_CHUNK);

  constructor(
    private readonly open: () => Engine,
    private readonly oneShot: (input: Buffer) => Buffer,
    private readonly what: string,
  ) {}

  run(input: Buffer): Buffer {
    const e = this.usable ? (this.engine ?? this.start()) : null;
    if (!e) return this.oneShot(input);
    try {
      const out = this.drive(e, input);
      e.reset();
      return out;
    } catch (err) {
      // A stream that failed mid-body may hold state; the next body gets a fresh one.
      this.engine = null;
      e.close();
      throw err;
    }
  }

  private start(): Engine | null {
    const e = this.open();
    const h = e._handle;
    // isView rather than instanceof: under jest the stream's array comes from another realm.
    const ws = e._writeState;
    if (!h || typeof h.writeSync !== "function" || !ArrayBuffer.isView(ws) || ws.length < 2) {
      // This Node lays its streams out differently: stay on the public one-shot API.
      this.usable = false;
      e.close();
      return null;
    }
    // Called synchronously from writeSync; the stream's own handler would destroy it on a later tick.
    h.onerror = (message: string, errno: number) => {
      this.failure = new Error(`${this.what} failed: ${message} (errno ${errno})`);
    };
    this.engine = e;
    return e;
  }

  private drive(e: Engine, input: Buffer): Buffer {
    const h = e._handle!;
    const state = e._writeState!;
    const out = this.scratch;
    const parts: Buffer[] = [];
    let inOff = 0;
    let inLen = input.length;
    for (;;) {
      this.failure = null;
      h.writeSync(constants.Z_FINISH, input, inOff, inLen, out, 0, out.length);
      if (this.failure) throw this.failure;
      const outLeft = state[0];
      const inLeft = state[1];
      parts.push(Buffer.from(out.subarray(0, out.length - outLeft)));
      // Output space left over means zlib reached the end of the stream.
      if (outLeft !== 0) break;
      inOff += inLen - inLeft;
      inLen = inLeft;
    }
    return parts.length === 1 ? parts[0] : Buffer.concat(parts);
  }
}

/** Raw deflate and inflate primed with one dictionary, each on a reused stream. */
export interface RawCodec {
  deflate(input: Buffer): Buffer;
  inflate(input: Buffer): Buffer;
}

/** A raw codec for one dictionary (or none) and compression level. */
export function rawCodec(dictionary: Buffer | undefined, level: number): RawCodec {
  const opts: ZlibOptions = dictionary ? { dictionary, level } : { level };
  const inflateOpts: ZlibOptions = dictionary ? { dictionary } : {};
  const def = new ReusedStream(
    () => createDeflateRaw(opts) as unknown as Engine,
    b => deflateRawSync(b, opts),
    "deflate",
  );
  const inf = new ReusedStream(
    () => createInflateRaw(inflateOpts) as unknown as Engine,
    b => inflateRawSync(b, inflateOpts),
    "inflate",
  );
  return { deflate: b => def.run(b), inflate: b => inf.run(b) };
}
