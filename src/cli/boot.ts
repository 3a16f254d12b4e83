// The entry of the bundled CLI (dist/cli/krply.js, see scripts/build-cli.mjs): it runs the chunk of
// src/cli/main.ts and whatever that chunk loads through the code cache, and writes the cache of
// what it compiled when the process exits.
import { join } from "node:path";
import { cliCacheDirOf } from "../config-early";
import { ChunkLoader } from "./code-cache";

// Each chunk's SHA-256 by file name, written in by scripts/build-cli.mjs (absent in the sources).
declare const KRPLY_CHUNK_DIGESTS: Record<string, string> | undefined;

/** Runs the krply CLI from the chunks beside this file. */
export async function runCli(argv: string[]): Promise<void> {
  const dir = cliCacheDirOf(process.env);
  const digests = typeof KRPLY_CHUNK_DIGESTS === "undefined" ? {} : KRPLY_CHUNK_DIGESTS;
  const loader = new ChunkLoader(dir === null ? null : join(dir, "v8"), digests, require);
  if (dir !== null) process.once("exit", () => loader.save());
  const main = loader.load(join(__dirname, "chunks", "main.js")) as typeof import("./main");
  await main.runCli(argv);
}
