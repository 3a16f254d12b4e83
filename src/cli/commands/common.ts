import type { Command } from "commander";
import type { Backend } from "../backend/backend";
import { explain, usage } from "../errors";
import { globalOptions, journalPath, type GlobalOptions } from "../program";

const RELATIVE = /^(\d+)(s|m|h|d)$/;
const UNIT_MS: Record<string, number> = { s: 1e3, m: 60e3, h: 3600e3, d: 86400e3 };
// The range an ECMAScript Date can hold: 100,000,000 days either side of 1970.
const MAX_DATE_MS = 8.64e15;

/** Parses a time flag: ISO 8601, `now`, or an age like `90s`, `15m`, `2h`, `7d` (ago). */
export function parseTimeFlag(text: string, flag: string, now = Date.now()): string {
  const t = text.trim();
  const hint = `use ISO 8601 (2026-01-31T12:00:00Z), "now", or an age like 15m, 2h, 7d`;
  if (t === "") throw usage(`${flag} is empty: ${hint}`);
  let ms: number;
  if (t === "now") ms = now;
  else {
    const rel = RELATIVE.exec(t);
    ms = rel ? now - Number(rel[1]) * UNIT_MS[rel[2]] : Date.parse(t);
  }
  if (Number.isNaN(ms)) throw usage(`${flag} "${text}" is not a time: ${hint}`);
  if (Math.abs(ms) > MAX_DATE_MS) throw usage(`${flag} "${text}" is out of range: ${hint}`);
  return new Date(ms).toISOString();
}

const REF = /^([A-Za-z][\w.-]*)\/([^/\s]+)$/;

/** Splits `kind/name`; anything else names the argument and shows the form. */
export function parseRef(text: string): { kind: string; name: string } {
  const m = REF.exec(text.trim());
  if (!m) {
    throw usage(
      `"${text}" is not <kind>/<name>: name the kind too, e.g. configmap/${text.includes("/") ? "app" : text || "app"} or deploy/web`,
    );
  }
  return { kind: m[1], name: m[2] };
}

/** Global options plus the shared --cluster flag of a subcommand. */
export function optionsOf(cmd: Command): GlobalOptions & { cluster?: string } {
  return { ...globalOptions(cmd), ...(cmd.opts() as { cluster?: string }) };
}

/**
 * The backend the global options name: the sidecar for --server, otherwise the local journal of
 * --store. Each loads only when asked for, so `--help` loads neither.
 */
export async function backendOf(opts: GlobalOptions): Promise<Backend> {
  if (opts.server) {
    const { RemoteBackend } = await import("../backend/remote");
    return RemoteBackend.connect(opts.server, { token: opts.token });
  }
  const { LocalBackend } = await import("../backend/local");
  return new LocalBackend(await journalPath(opts));
}

/**
 * Runs a body with the backend of the options and always closes it; a failure is explained with
 * the journal it is about.
 */
export async function withBackend<T>(
  opts: GlobalOptions,
  body: (b: Backend) => Promise<T>,
): Promise<T> {
  const b = await backendOf(opts);
  try {
    return await body(b);
  } catch (err) {
    throw explain(err, opts.server ? undefined : b.where);
  } finally {
    await b.close();
  }
}

/** Shortens a stream id for tables: cluster and empty parts add nothing there. */
export function shortStream(streamId: string): string {
  const parts = streamId.split("/");
  return parts.slice(1).join("/");
}
