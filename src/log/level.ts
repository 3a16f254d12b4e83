// The log level, apart from src/config.ts: the logger needs it before any configuration loads, and
// reading it must not load zod and the settings schema into every CLI read (docs/benchmarks.md).
// config.ts checks KRPLY_LOG_LEVEL and LOG_LEVEL against these same names.

/** pino's levels; Pepr logs with pino too, so its LOG_LEVEL takes the same names. */
export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

const isLevel = (v: string): v is LogLevel => (LOG_LEVELS as readonly string[]).includes(v);

/**
 * The log level alone: KRPLY_LOG_LEVEL, else Pepr's LOG_LEVEL, else info. It never throws: an
 * invalid level logs at info here, and loadConfig reports it where the configuration loads.
 */
export function logLevelOf(env: Readonly<Record<string, string | undefined>>): LogLevel {
  const value = [env.KRPLY_LOG_LEVEL, env.LOG_LEVEL].find(v => v !== undefined && v.trim() !== "");
  if (value === undefined) return "info";
  const level = value.trim();
  return isLevel(level) ? level : "info";
}
