// Bundles the krply CLI as ES modules split into chunks: a command loads only the chunks its action
// imports, so `krply --help` compiles commander and the command declarations, not the journal, zod
// or the kube client (see docs/benchmarks.md, CLI start-up).
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { build } from "esbuild";

// `node scripts/build-cli.mjs [OUTDIR]`; tests build into a temp folder so parallel runs never race.
const here = import.meta.dirname ?? new URL(".", import.meta.url).pathname;
const out = process.argv[2] ? resolve(process.argv[2]) : join(here, "..", "dist", "cli");
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
await build({
  entryPoints: { krply: join(here, "..", "src", "cli", "main.ts") },
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  outdir: out,
  chunkNames: "chunks/[name]-[hash]",
  // The native addon cannot be bundled; client-node is large and only `record` and --server need it.
  external: ["better-sqlite3", "@kubernetes/client-node"],
  // Bundled CommonJS dependencies (pino, commander) call require; give them one in ES modules.
  banner: {
    js: 'import { createRequire as __krplyRequire } from "node:module"; const require = __krplyRequire(import.meta.url);',
  },
  // Smaller chunks parse and compile faster at every start; errors never show stack traces anyway.
  minify: true,
  logLevel: "warning",
});
// The chunks are ES modules; this folder says so, whatever the package around it declares.
writeFileSync(join(out, "package.json"), `${JSON.stringify({ type: "module" })}\n`);
