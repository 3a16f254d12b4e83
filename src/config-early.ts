// Settings a process reads alone, before or without its configuration: src/config.ts builds zod and
// the whole settings schema at import, which a CLI read by --store must not pay for (see
// docs/benchmarks.md, CLI start-up). config.ts re-exports these, so the rules stay in one place.
import { isAbsolute, join, resolve } from "node:path";

const isSet = (v: string | undefined): v is string => v !== undefined && v.trim() !== "";

/**
 * The native addon path alone, for the CLI, which opens a journal given by --store without loading
 * the rest of the configuration (a bad unrelated variable must not stop `krply --store x`).
 */
export function sqliteBindingOf(
  env: Readonly<Record<string, string | undefined>>,
): string | undefined {
  const value = env.KRPLY_SQLITE_BINDING;
  return isSet(value) ? value.trim() : undefined;
}

/**
 * Where the CLI keeps V8's compiled code of its bundle (src/cli/code-cache.ts), or null for none:
 * KRPLY_CLI_CACHE (`off` for none), else the user's cache folder ($XDG_CACHE_HOME, ~/.cache,
 * ~/Library/Caches on macOS, %LOCALAPPDATA% on Windows). Read before anything else loads, so it
 * never fails: a relative XDG_CACHE_HOME is ignored, as the XDG spec says.
 */
export function cliCacheDirOf(
  env: Readonly<Record<string, string | undefined>>,
  platform: string = process.platform,
): string | null {
  const value = env.KRPLY_CLI_CACHE;
  if (isSet(value)) return value.trim() === "off" ? null : resolve(value.trim());
  const xdg = env.XDG_CACHE_HOME;
  if (isSet(xdg) && isAbsolute(xdg)) return join(xdg, "krply");
  if (platform === "win32") {
    return isSet(env.LOCALAPPDATA) ? join(env.LOCALAPPDATA, "krply", "Cache") : null;
  }
  if (!isSet(env.HOME)) return null;
  return platform === "darwin"
    ? join(env.HOME, "Library", "Caches", "krply")
    : join(env.HOME, ".cache", "krply");
}
