import pino, { type Logger } from "pino";

const root: Logger = pino({
  name: "krply",
  level: process.env.KRPLY_LOG_LEVEL ?? process.env.LOG_LEVEL ?? "info",
  base: undefined,
  timestamp: pino.stdTimeFunctions.isoTime,
});

/** Returns a structured child logger tagged with the component that owns the log line. */
export function logger(component: string): Logger {
  return root.child({ component });
}

export type { Logger };
