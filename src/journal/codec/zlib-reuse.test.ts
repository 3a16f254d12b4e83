import { randomBytes } from "node:crypto";
import { createInflateRaw, deflateRawSync, inflateRawSync } from "node:zlib";
import fc from "fast-check";
import { DEFLATE_DICTIONARY } from "./dictionary";
import { rawCodec, ReusedStream } from "./zlib-reuse";

describe("rawCodec on reused zlib streams", () => {
  const dict = rawCodec(DEFLATE_DICTIONARY, 6);
  const plain = rawCodec(undefined, 6);

  it("round-trips body after body, and reads and is read by the one-shot functions", () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ maxLength: 3000 }), { minLength: 1, maxLength: 6 }),
        texts => {
          for (const t of texts) {
            const raw = Buffer.from(t, "utf8");
            const z = dict.deflate(raw);
            expect(inflateRawSync(z, { dictionary: DEFLATE_DICTIONARY }).equals(raw)).toBe(true);
            expect(dict.inflate(z).equals(raw)).toBe(true);
            const oneShot = deflateRawSync(raw, { level: 6, dictionary: DEFLATE_DICTIONARY });
            expect(dict.inflate(oneShot).equals(raw)).toBe(true);
            expect(plain.inflate(deflateRawSync(raw)).equals(raw)).toBe(true);
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it("stays correct where a reset stream's bytes differ from a fresh stream's", () => {
    // Node's zlib hashes four bytes per position, one of them past the input's end, and a reset
    // does not clear the window. A stale byte from the previous body can therefore steer the
    // match search: the reused stream may pick a different (equally valid) encoding than a fresh
    // one. Nothing compares deflated bytes, so only the round trip is promised.
    const codec = rawCodec(DEFLATE_DICTIONARY, 6);
    for (const t of ["~)p.AU!", "app", "", "app", '{"apiVersion":"apps/v1"}']) {
      const raw = Buffer.from(t, "utf8");
      const z = codec.deflate(raw);
      expect(inflateRawSync(z, { dictionary: DEFLATE_DICTIONARY }).toString("utf8")).toBe(t);
      expect(codec.inflate(z).toString("utf8")).toBe(t);
    }
  });

  it("handles bodies whose input and output span several internal chunks", () => {
    // Random bytes do not compress, so the deflated form is larger than one 16 KiB output chunk.
    const noise = randomBytes(70_000);
    const text = Buffer.from(JSON.stringify({ items: Array.from({ length: 4000 }, (_, i) => i) }));
    for (const body of [noise, text]) {
      const z = dict.deflate(body);
      expect(inflateRawSync(z, { dictionary: DEFLATE_DICTIONARY }).equals(body)).toBe(true);
      expect(dict.inflate(z).equals(body)).toBe(true);
    }
  });

  it("throws a clear error on a corrupt body and keeps working afterwards", () => {
    const s = new ReusedStream(
      () => createInflateRaw() as never,
      () => {
        throw new Error("the one-shot fallback ran");
      },
      "inflate",
    );
    const good = deflateRawSync(Buffer.from('{"kind":"ConfigMap"}'));
    expect(s.run(good).toString()).toBe('{"kind":"ConfigMap"}');
    expect(() => s.run(Buffer.from([0xff, 0xff, 0xff, 0x00, 0x13]))).toThrow(
      /inflate failed: .*errno/,
    );
    expect(s.run(good).toString()).toBe('{"kind":"ConfigMap"}');
  });

  it("falls back to the one-shot function when the stream has no usable native handle", () => {
    let opened = 0;
    let oneShots = 0;
    const s = new ReusedStream(
      () => {
        opened++;
        const e = createInflateRaw();
        // Simulate a Node whose stream keeps its write state elsewhere.
        return Object.assign(Object.create(e) as object, {
          _writeState: undefined,
          _handle: (e as unknown as { _handle: unknown })._handle,
          reset: () => e.reset(),
          close: () => e.close(),
        }) as never;
      },
      b => {
        oneShots++;
        return inflateRawSync(b);
      },
      "inflate",
    );
    const z = deflateRawSync(Buffer.from("hello"));
    expect(s.run(z).toString()).toBe("hello");
    expect(s.run(z).toString()).toBe("hello");
    expect(opened).toBe(1);
    expect(oneShots).toBe(2);
  });
});
