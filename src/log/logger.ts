import type { Logger } from "pino";
import { logLevelOf } from "./level";

let root: Logger | null = null;

/**
 * The root logger, made when something first logs. Modules take their child loggers as they load, so
 * loading pino here, not at import, keeps it out of a CLI read that logs nothing (see
 * docs/benchmarks.md, CLI start-up).
 */
function rootLogger(): Logger {
  if (root) return root;
  // A synchronous, deferred load: a bundler keeps pino uninitialised until this runs.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const pino = require("pino") as typeof import("pino");
  // The level follows the config's own rule (KRPLY_LOG_LEVEL, else Pepr's LOG_LEVEL, else info).
  root = pino.pino({
    name: "krply",
    level: logLevelOf(process.env),
    base: undefined,
    timestamp: pino.stdTimeFunctions.isoTime,
  });
  return root;
}

/**
 * Returns a structured child logger tagged with the component that owns the log line. It stands in
 * for the pino child, which is made on its first use.
 */
export function logger(component: string): Logger {
  let child: Logger | null = null;
  const target = (): Logger => (child ??= rootLogger().child({ component }));
  // Methods are bound once per name; a level change replaces pino's methods, so it clears them.
  const bound = new Map<PropertyKey, unknown>();
  return new Proxy({} as Logger, {
    get(_t, prop) {
      const hit = bound.get(prop);
      if (hit !== undefined) return hit;
      const c = target();
      const v = Reflect.get(c, prop, c) as unknown;
      if (typeof v !== "function") return v;
      const fn = (v as (...a: unknown[]) => unknown).bind(c);
      bound.set(prop, fn);
      return fn;
    },
    set(_t, prop, value) {
      bound.clear();
      return Reflect.set(target(), prop, value);
    },
    has: (_t, prop) => prop in target(),
  });
}

export type { Logger };
