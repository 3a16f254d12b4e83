import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  CHUNK_HEAD,
  ChunkLoader,
  cacheName,
  chunkDigest,
  decodeCache,
  encodeCache,
  pruneStale,
} from "./code-cache";

let dir: string;
let chunks: string;
let cache: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "krply-code-cache-"));
  chunks = join(dir, "chunks");
  cache = join(dir, "cache");
  writeFileSync(join(dir, "placeholder"), "");
  mkdirSync(chunks);
});

afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Writes chunks the way the build does (wrapped) and returns their digests. */
function writeChunks(files: Record<string, string>): Record<string, string> {
  const digests: Record<string, string> = {};
  for (const [name, body] of Object.entries(files)) {
    const text = `${CHUNK_HEAD}${body}\n})`;
    writeFileSync(join(chunks, name), text);
    digests[name] = chunkDigest(text);
  }
  return digests;
}

// main.js requires a.js, which requires main.js back (a cycle, as chunks may form) and Node's own
// path module; main.js imports lazy.js with the importer the build hands every chunk.
const CHUNKS = {
  "main.js": `
    exports.early = "main-early";
    const a = require("./a.js");
    exports.sum = (x, y) => a.add(x, y);
    exports.fromA = a.seenMain;
    exports.lazy = () => __krplyImport("./lazy.js").then(m => m.value);`,
  "a.js": `
    const main = require("./main.js");
    exports.seenMain = main.early;
    exports.add = (x, y) => x + y + require("node:path").sep.length - 1;`,
  "lazy.js": `exports.value = "lazy " + __filename.endsWith("lazy.js");`,
};

interface Main {
  sum(x: number, y: number): number;
  fromA: string;
  lazy(): Promise<string>;
}

let starts = 0;

/**
 * One start of the CLI: a new loader over a copy of the chunks in a folder of its own. V8 keeps
 * what this process compiled by text and file name, so a second start from the same files would
 * reuse that and never look at the cache file; a new file name makes it load as a new process does.
 */
function run(digests: Record<string, string>, cacheDir: string | null = cache) {
  const copy = join(dir, `start-${++starts}`);
  cpSync(chunks, copy, { recursive: true });
  const loader = new ChunkLoader(cacheDir, digests, require);
  const main = loader.load(join(copy, "main.js")) as Main;
  return { loader, main, copy };
}

describe("ChunkLoader", () => {
  it("runs chunks that require each other, Node's modules and import() of another chunk", async () => {
    const { main, loader, copy } = run(writeChunks(CHUNKS), null);
    expect(main.sum(2, 3)).toBe(5);
    expect(main.fromA).toBe("main-early");
    await expect(main.lazy()).resolves.toBe("lazy true");
    expect(loader.load(join(copy, "main.js"))).toBe(main);
  });

  it("writes a cache per chunk after the run, and the next start compiles from it", async () => {
    const digests = writeChunks(CHUNKS);
    const first = run(digests);
    await first.main.lazy();
    expect(first.loader.cacheHits).toEqual([]);
    first.loader.save();
    expect(readdirSync(cache).sort()).toEqual(
      Object.values(digests)
        .map(d => cacheName(d))
        .sort(),
    );
    const second = run(digests);
    expect(second.main.sum(1, 1)).toBe(2);
    await second.main.lazy();
    expect(second.loader.cacheHits.sort()).toEqual(["a.js", "lazy.js", "main.js"]);
  });

  it("never hands V8 a damaged cache file: the chunk compiles and the file is rewritten", () => {
    const digests = writeChunks(CHUNKS);
    run(digests).loader.save();
    const file = join(cache, cacheName(digests["main.js"]));
    const good = readFileSync(file);
    const damaged = Buffer.from(good);
    for (let i = 60; i < damaged.length; i += 7) damaged[i] ^= 0x5a;
    writeFileSync(file, damaged);
    writeFileSync(join(cache, cacheName(digests["a.js"])), good.subarray(0, 30)); // cut short
    const again = run(digests);
    expect(again.main.sum(2, 2)).toBe(4);
    expect(again.loader.cacheHits).toEqual([]);
    again.loader.save();
    expect(decodeCache(readFileSync(file))).toBeDefined();
    expect(run(digests).loader.cacheHits.sort()).toEqual(["a.js", "main.js"]);
  });

  it("keys the cache by the chunk's text: a changed chunk does not read the old chunk's cache", () => {
    const old = writeChunks(CHUNKS);
    run(old).loader.save();
    const changed = writeChunks({ ...CHUNKS, "a.js": CHUNKS["a.js"].replace("x + y", "x * y") });
    expect(changed["a.js"]).not.toBe(old["a.js"]);
    const { main, loader } = run(changed);
    expect(main.sum(2, 3)).toBe(6);
    expect(loader.cacheHits).toEqual(["main.js"]);
  });

  it("rewrites a cache V8 rejects (one made for other code under this chunk's name)", () => {
    const digests = writeChunks(CHUNKS);
    run(digests).loader.save();
    // An intact file (its checksum holds) whose payload V8 made for a.js, not main.js.
    const aCache = readFileSync(join(cache, cacheName(digests["a.js"])));
    writeFileSync(join(cache, cacheName(digests["main.js"])), aCache);
    const again = run(digests);
    expect(again.main.sum(1, 2)).toBe(3);
    expect(again.loader.cacheHits).toEqual(["a.js"]);
    again.loader.save();
    expect(readFileSync(join(cache, cacheName(digests["main.js"])))).not.toEqual(aCache);
  });

  it("runs without a cache where none can be written, and never throws from save()", () => {
    const digests = writeChunks(CHUNKS);
    const blocked = join(dir, "placeholder", "cache"); // below a file: cannot be created
    const { main, loader } = run(digests, blocked);
    expect(main.sum(1, 2)).toBe(3);
    expect(() => loader.save()).not.toThrow();
    expect(existsSync(blocked)).toBe(false);
  });

  it("refuses a file that is not a chunk of the CLI", () => {
    writeFileSync(join(chunks, "main.js"), "module.exports = 1;");
    expect(() => run({})).toThrow(/is not a chunk of the krply CLI/);
  });
});

describe("cache files", () => {
  it("decode only what encodeCache wrote, intact", () => {
    const payload = Buffer.from("some compiled code");
    const file = encodeCache(payload);
    expect(decodeCache(file)).toEqual(payload);
    const flipped = Buffer.from(file);
    flipped[flipped.length - 1] ^= 1;
    expect(decodeCache(flipped)).toBeUndefined();
    expect(decodeCache(file.subarray(0, 20))).toBeUndefined();
    expect(decodeCache(Buffer.concat([Buffer.from("NOTKRPLY"), file.subarray(8)]))).toBeUndefined();
  });

  it("are pruned when no start wrote them for 30 days, with parts a killed writer left", () => {
    mkdirSync(cache);
    const now = Date.now();
    const at = (name: string, ageMs: number) => {
      writeFileSync(join(cache, name), "x");
      const t = new Date(now - ageMs);
      utimesSync(join(cache, name), t, t);
    };
    at("old.v8", 31 * 86_400_000);
    at("recent.v8", 86_400_000);
    at("left.v8.123.part", 2 * 3_600_000);
    at("writing.v8.456.part", 1000);
    at("other-file", 365 * 86_400_000);
    pruneStale(cache, now);
    expect(readdirSync(cache).sort()).toEqual(["other-file", "recent.v8", "writing.v8.456.part"]);
  });
});
