// Builds the web UI into web/dist: one esbuild bundle (app.js + app.css) and index.html. The sidecar
// serves that directory (src/api/static-ui.ts). Tests that need the UI call buildWeb() themselves, so
// web/dist is never committed and never stale.
import { build } from "esbuild";
import { copyFile, mkdir } from "node:fs/promises";
import { join, resolve } from "node:path";

export const WEB_DIST = resolve(__dirname, "dist");

export interface BuiltWeb {
  outDir: string;
}

/** Bundles web/src/main.tsx into outDir (default web/dist) with index.html beside it. */
export async function buildWeb(
  opts: { outDir?: string; minify?: boolean } = {},
): Promise<BuiltWeb> {
  const outDir = opts.outDir ?? WEB_DIST;
  await mkdir(outDir, { recursive: true });
  await build({
    entryPoints: { app: resolve(__dirname, "src/main.tsx") },
    bundle: true,
    outdir: outDir,
    format: "esm",
    platform: "browser",
    target: ["chrome110", "firefox115", "safari16"],
    minify: opts.minify ?? true,
    sourcemap: "linked",
    jsx: "automatic",
    jsxImportSource: "preact",
    tsconfig: resolve(__dirname, "tsconfig.json"),
    legalComments: "none",
    logLevel: "warning",
  });
  await copyFile(resolve(__dirname, "index.html"), join(outDir, "index.html"));
  return { outDir };
}

if (require.main === module) {
  buildWeb({ outDir: process.argv[2] }).catch((err: unknown) => {
    process.stderr.write(`build:web: ${(err as Error).message}\n`);
    process.exit(1);
  });
}
