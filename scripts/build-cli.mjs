// Bundles the krply CLI into chunks: a command loads only the chunks its action imports, so
// `krply --help` compiles commander and the command declarations, not the journal, zod or the kube
// client. esbuild splits only ES modules, so the chunks are split as ES modules and then turned
// into CommonJS, which the entry (src/cli/boot.ts) runs with V8's code cache (src/cli/code-cache.ts;
// see docs/benchmarks.md, CLI start-up). Layout: krply.js (the entry), chunks/main.js (the CLI),
// chunks/*-HASH.js.
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { basename, join, relative, resolve } from "node:path";
import { build, transform } from "esbuild";

// `node scripts/build-cli.mjs [OUTDIR] [--names] [--metafile=FILE]`; tests build into a temp folder
// so parallel runs never race. --names keeps function names (a CPU profile of a benchmark's `krply
// record` is read by them); the code is otherwise the same. --metafile writes esbuild's account of
// which sources went into which chunk (tests read what a command loads from it).
const here = import.meta.dirname ?? new URL(".", import.meta.url).pathname;
const root = join(here, "..");
const args = process.argv.slice(2);
const outArg = args.find(a => !a.startsWith("--"));
const out = outArg ? resolve(outArg) : join(root, "dist", "cli");
const metaArg = args.find(a => a.startsWith("--metafile="))?.slice("--metafile=".length);
// Every chunk is written wrapped in the function src/cli/code-cache.ts runs it as (CHUNK_HEAD there);
// its import() calls go to the importer that function takes.
const IMPORT_PARAM = "__krplyImport";
const CHUNK_HEAD = `(function (exports, require, module, __filename, __dirname, ${IMPORT_PARAM}) {`;
// The native addon cannot be bundled; client-node is large and only `record` and --server need it.
const external = ["@kubernetes/client-node"];

// commander requires child_process at load for executable subcommands, which krply has none of;
// loading it costs every start about 8 ms (net, dgram, streams). Commander gets it on first use.
const lazyChildProcess = {
  name: "lazy-child-process",
  setup(b) {
    b.onResolve({ filter: /^(node:)?child_process$/ }, args =>
      /[\\/]node_modules[\\/]commander[\\/]/.test(args.importer)
        ? { path: "child_process", namespace: "lazy-child-process" }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: "lazy-child-process" }, () => ({
      contents:
        'module.exports = new Proxy({}, { get: (_, name) => require("node:child_process")[name] });',
      loader: "js",
    }));
  },
};

const NAMES = args.includes("--names")
  ? { minify: false, minifyWhitespace: true, minifySyntax: true, minifyIdentifiers: false }
  : {};
rmSync(out, { recursive: true, force: true });
mkdirSync(join(out, "chunks"), { recursive: true });
const split = await build({
  entryPoints: { main: join(root, "src", "cli", "main.ts") },
  absWorkingDir: root,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  outdir: join(out, "chunks"),
  chunkNames: "[name]-[hash]",
  external,
  plugins: [lazyChildProcess],
  // Smaller chunks load faster at every start; errors never show stack traces anyway.
  minify: true,
  ...NAMES,
  metafile: true,
  write: false,
  logLevel: "warning",
});

// Each chunk's SHA-256 (src/cli/code-cache.ts chunkDigest): the entry keys its code cache by them.
const digests = {};
for (const file of split.outputFiles) {
  const meta = split.metafile.outputs[relative(root, file.path)];
  const dynamic = meta.imports.filter(i => i.kind === "dynamic-import").length;
  // A chunk's import() of another chunk or a package goes to the loader's importer, which loads
  // chunks itself and packages through Node.
  let found = 0;
  const code = file.text.replace(/(?<![\w$.])import\(("[^"\\]*")\)/g, (_, spec) => {
    found += 1;
    return `${IMPORT_PARAM}(${spec})`;
  });
  if (found < dynamic) {
    throw new Error(`${file.path}: ${dynamic} dynamic imports, only ${found} handed to the loader`);
  }
  const cjs = await transform(code, {
    format: "cjs",
    platform: "node",
    target: "node20",
    minify: true,
    ...NAMES,
    logLevel: "warning",
  });
  if (/(?<![\w$.])import\s*\(|import\.meta/.test(cjs.code)) {
    throw new Error(`${file.path}: an import() or import.meta the chunk loader cannot serve`);
  }
  const text = `${CHUNK_HEAD}${cjs.code}\n})`;
  writeFileSync(file.path, text);
  digests[basename(file.path)] = createHash("sha256").update(text).digest("hex");
}

await build({
  entryPoints: [join(root, "src", "cli", "boot.ts")],
  bundle: true,
  format: "cjs",
  platform: "node",
  target: "node20",
  outfile: join(out, "krply.js"),
  define: { KRPLY_CHUNK_DIGESTS: JSON.stringify(digests) },
  minify: true,
  logLevel: "warning",
});
// The journal's writer thread (src/journal/write/writer-thread.ts) loads this file beside the chunk
// that starts it; a recorder of a big cluster commits its appends there.
const worker = await build({
  entryPoints: [join(root, "src", "journal", "write", "writer-worker.ts")],
  absWorkingDir: root,
  bundle: true,
  format: "cjs",
  platform: "node",
  target: "node20",
  outfile: join(out, "chunks", "writer-worker.js"),
  external,
  minify: true,
  ...NAMES,
  metafile: metaArg !== undefined,
  logLevel: "warning",
});
if (metaArg !== undefined) {
  // Output paths relative to the checkout, as esbuild writes them; each lists its sources' bytes.
  const outputs = { ...split.metafile.outputs, ...worker.metafile.outputs };
  writeFileSync(resolve(metaArg), `${JSON.stringify({ outputs })}\n`);
}
// Every file here is CommonJS, whatever the package around it declares.
writeFileSync(join(out, "package.json"), `${JSON.stringify({ type: "commonjs" })}\n`);
