import pino, { type Logger } from "pino";
import { logLevelOf } from "../config";

// Modules take their child loggers as they load, before any configuration is loaded, so the level is
// read here by the config's own rule (KRPLY_LOG_LEVEL, else Pepr's LOG_LEVEL, else info).
const root: Logger = pino({
  name: "krply",
  level: logLevelOf(process.env),
  base: undefined,
  timestamp: pino.stdTimeFunctions.isoTime,
});

/** Returns a structured child logger tagged with the component that owns the log line. */
export function logger(component: string): Logger {
  return root.child({ component });
}

export type { Logger };
