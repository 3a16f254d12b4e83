// Loads the bundled CLI's chunks (CommonJS, see scripts/build-cli.mjs) with V8's code cache, so a
// start compiles only what changed since the last run instead of every chunk it loads (see
// docs/benchmarks.md, CLI start-up). Node 20 has no compile cache for modules of its own
// (module.enableCompileCache came in 22) and none at all for ES modules, so the chunks run as
// scripts here, each with the cache V8 made for exactly its text.
//
// A cache can only save time: it is keyed by the SHA-256 of the chunk's text (which the build
// writes into the entry, so a start hashes no source) and the Node that made it; its payload carries
// a SHA-256 that is checked before V8 sees it (V8 trusts a corrupt payload and crashes on it); one V8
// rejects is rewritten; and any failure to read or write one is ignored.
import { createHash } from "node:crypto";
import {
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { Script } from "node:vm";

/**
 * How every chunk file starts (scripts/build-cli.mjs writes it; the chunk ends with `\n})`): the
 * build wraps each chunk in the function a CommonJS module runs as, plus the importer its import()
 * calls go to, so a start compiles the file's text as it is instead of a wrapped copy of it.
 */
export const CHUNK_HEAD =
  "(function (exports, require, module, __filename, __dirname, __krplyImport) {";

const MAGIC = Buffer.from("KRPLYV8\u0001");
const DIGEST = 32;
const HEADER = MAGIC.length + DIGEST;
/**
 * A cache file nobody wrote for this long belongs to a build no longer run. Reading one does not
 * touch it, so a build still in use after that is compiled once more when a newer one prunes it.
 */
const STALE_MS = 30 * 86_400_000;

const sha256 = (data: string | Buffer): Buffer => createHash("sha256").update(data).digest();

/** The SHA-256 (hex) of a chunk's text, as the build computes it for each chunk. */
export function chunkDigest(source: string | Buffer): string {
  return sha256(source).toString("hex");
}

/**
 * The cache file of a chunk, by its digest, for this Node. V8 itself checks only the text's length,
 * its version and its flags (it rejects a cache made under other flags, which is then rewritten).
 */
export function cacheName(digest: string): string {
  return `${digest.slice(0, 40)}-${process.version}-${process.arch}.v8`;
}

/** A cache file: magic, the SHA-256 of the payload, the payload V8 made. */
export function encodeCache(payload: Buffer): Buffer {
  return Buffer.concat([MAGIC, sha256(payload), payload]);
}

/** The payload of a cache file, or undefined when the file is not one this code wrote intact. */
export function decodeCache(file: Buffer): Buffer | undefined {
  if (file.length <= HEADER || !file.subarray(0, MAGIC.length).equals(MAGIC)) return undefined;
  const payload = file.subarray(HEADER);
  return sha256(payload).equals(file.subarray(MAGIC.length, HEADER)) ? payload : undefined;
}

interface Loaded {
  exports: unknown;
}

interface Compiled {
  script: Script;
  cacheFile: string;
}

type ChunkFunction = (
  exports: unknown,
  require: NodeJS.Require,
  module: Loaded,
  filename: string,
  dirname: string,
  importer: (specifier: string) => Promise<unknown>,
) => void;

/**
 * Runs CommonJS chunks that require one another by relative path. Each chunk is loaded once; a
 * relative require or import() goes to another chunk, anything else to Node from the chunk's folder.
 */
export class ChunkLoader {
  private readonly loaded = new Map<string, Loaded>();
  /** Chunks compiled without an accepted cache: their cache is written by save(). */
  private readonly uncached: Compiled[] = [];
  /** Chunks whose cache V8 accepted, by file name (what a start saved; tests read it). */
  readonly cacheHits: string[] = [];

  /**
   * cacheDir null: no cache is read or written. digests: each chunk's chunkDigest by file name, as
   * the build computed them; a chunk without one runs without a cache. nodeRequire: the require of
   * a module in the chunks' parent folder (the entry's own), which finds the same packages the
   * chunks would; it spares loading node:module (and with it Node's ES module loader) for
   * createRequire.
   */
  constructor(
    private readonly cacheDir: string | null,
    private readonly digests: Readonly<Record<string, string>>,
    private readonly nodeRequire: NodeJS.Require,
  ) {}

  /** The exports of the chunk at an absolute path, running it first if this loader has not. */
  load(file: string): unknown {
    const hit = this.loaded.get(file);
    if (hit) return hit.exports;
    const source = readFileSync(file, "utf8");
    if (!source.startsWith(CHUNK_HEAD)) throw new Error(`${file} is not a chunk of the krply CLI`);
    const name = basename(file);
    const digest = Object.hasOwn(this.digests, name) ? this.digests[name] : undefined;
    const cacheFile =
      this.cacheDir === null || digest === undefined
        ? null
        : join(this.cacheDir, cacheName(digest));
    const cachedData = cacheFile === null ? undefined : readCache(cacheFile);
    const script = new Script(source, { filename: file, cachedData });
    if (cacheFile !== null) {
      if (cachedData !== undefined && script.cachedDataRejected !== true) this.cacheHits.push(name);
      else this.uncached.push({ script, cacheFile });
    }
    const run = script.runInThisContext() as ChunkFunction;
    const module: Loaded = { exports: {} };
    // Registered before it runs, as Node does, so chunks that require each other see each other.
    this.loaded.set(file, module);
    const dir = dirname(file);
    try {
      run.call(module.exports, module.exports, this.requireFrom(dir), module, file, dir, spec =>
        this.importFrom(dir, spec),
      );
    } catch (err) {
      this.loaded.delete(file);
      throw err;
    }
    return module.exports;
  }

  private requireFrom(dir: string): NodeJS.Require {
    const node = this.nodeRequire;
    const req = ((spec: string) =>
      isRelative(spec) ? this.load(resolve(dir, spec)) : node(spec)) as NodeJS.Require;
    req.resolve = node.resolve;
    req.cache = node.cache;
    req.main = node.main;
    req.extensions = node.extensions;
    return req;
  }

  private importFrom(dir: string, spec: string): Promise<unknown> {
    if (isRelative(spec)) return Promise.resolve().then(() => this.load(resolve(dir, spec)));
    // Packages (ES modules among them) and Node's own modules load through Node's loader.
    return import(spec) as Promise<unknown>;
  }

  /**
   * Writes the cache of every chunk this run compiled without one, after it ran, so the cache holds
   * the functions the run compiled. Never throws: without a cache the next start is only slower.
   */
  save(): void {
    if (this.cacheDir === null || this.uncached.length === 0) return;
    try {
      mkdirSync(this.cacheDir, { recursive: true });
    } catch {
      return;
    }
    for (const { script, cacheFile } of this.uncached.splice(0)) {
      try {
        const payload = script.createCachedData();
        if (payload.length === 0) continue;
        // Written aside and renamed: a reader sees a whole file or none, whoever runs at once.
        const part = `${cacheFile}.${process.pid}.part`;
        writeFileSync(part, encodeCache(payload), { mode: 0o600 });
        renameSync(part, cacheFile);
      } catch {
        // A full disk or a read-only home: the next start compiles again.
      }
    }
    pruneStale(this.cacheDir, Date.now());
  }
}

const isRelative = (spec: string): boolean => spec.startsWith("./") || spec.startsWith("../");

function readCache(file: string): Buffer | undefined {
  try {
    return decodeCache(readFileSync(file));
  } catch {
    return undefined;
  }
}

/** Removes cache files of builds no longer run, and parts a killed writer left. */
export function pruneStale(dir: string, now: number): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.endsWith(".v8") && !name.endsWith(".part")) continue;
    const file = join(dir, name);
    try {
      const age = now - statSync(file).mtimeMs;
      if (age > (name.endsWith(".part") ? 3_600_000 : STALE_MS)) unlinkSync(file);
    } catch {
      // Removed by another run meanwhile.
    }
  }
}
