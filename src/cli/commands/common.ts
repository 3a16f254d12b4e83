import type { Command } from "commander";
import { z } from "zod";
import { openJournal, openJournalView, type Journal, type JournalView } from "../../journal";
import { globalOptions, type GlobalOptions } from "../program";

const RelativeSchema = z.string().regex(/^(\d+)(s|m|h|d)$/);
const UNIT_MS: Record<string, number> = { s: 1e3, m: 60e3, h: 3600e3, d: 86400e3 };

/** Parses a time flag: ISO 8601, `now`, or an age like `90s`, `15m`, `2h`, `7d` (ago). */
export function parseTimeFlag(text: string, flag: string, now = Date.now()): string {
  const t = z.string().trim().min(1, `${flag} is empty`).parse(text);
  if (t === "now") return new Date(now).toISOString();
  const rel = RelativeSchema.safeParse(t);
  if (rel.success) {
    const m = /^(\d+)(s|m|h|d)$/.exec(t)!;
    return new Date(now - Number(m[1]) * UNIT_MS[m[2]]).toISOString();
  }
  const ms = Date.parse(t);
  if (Number.isNaN(ms)) {
    throw new Error(
      `${flag} "${text}" is not a time: use ISO 8601, "now", or an age like 15m, 2h, 7d`,
    );
  }
  return new Date(ms).toISOString();
}

const RefSchema = z
  .string()
  .regex(/^[A-Za-z][\w.-]*\/[^/\s]+$/, "expected <kind>/<name>, e.g. deployment/web");

/** Splits `kind/name` (zod-checked). */
export function parseRef(text: string): { kind: string; name: string } {
  const ref = RefSchema.parse(text);
  const i = ref.indexOf("/");
  return { kind: ref.slice(0, i), name: ref.slice(i + 1) };
}

/** Opens the journal named by --store for reading. */
export function openStoreView(opts: GlobalOptions): JournalView {
  try {
    return openJournalView(opts.store);
  } catch (err) {
    throw new Error(`cannot open journal ${opts.store}`, { cause: err });
  }
}

/** Opens the journal named by --store as its writer (it takes one writer at a time). */
export function openStoreWriter(opts: GlobalOptions): Journal {
  try {
    return openJournal(opts.store);
  } catch (err) {
    throw new Error(`cannot open journal ${opts.store} for writing`, { cause: err });
  }
}

/** Global options plus the shared --cluster flag of a subcommand. */
export function optionsOf(cmd: Command): GlobalOptions & { cluster?: string } {
  return { ...globalOptions(cmd), ...(cmd.opts() as { cluster?: string }) };
}

/** Runs a body with a read-only view of the journal and always closes it. */
export function withView<T>(opts: GlobalOptions, body: (v: JournalView) => T): T {
  const v = openStoreView(opts);
  try {
    return body(v);
  } finally {
    v.close();
  }
}

/** Runs a body with the journal's writer and always closes it. */
export function withWriter<T>(opts: GlobalOptions, body: (j: Journal) => T): T {
  const j = openStoreWriter(opts);
  try {
    return body(j);
  } finally {
    j.close();
  }
}

/** Shortens a stream id for tables: cluster and empty parts add nothing there. */
export function shortStream(streamId: string): string {
  const parts = streamId.split("/");
  return parts.slice(1).join("/");
}
