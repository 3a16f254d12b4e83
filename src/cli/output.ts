import type { Answer } from "../materialize";
import type { GlobalOptions } from "./program";

/** What the CLI prints: materialize's answer, or plain data with warnings (e.g. a list). */
export type Printable<T> = Pick<Answer<T>, "data" | "warnings"> &
  Partial<Pick<Answer<T>, "coverage">>;

/**
 * Prints an answer in the chosen format; warnings go next to it, never dropped. ndjson prints each
 * element of a list on its own line (a single value as one line), then one line with the coverage
 * and warnings.
 */
export async function printAnswer<T>(
  opts: Pick<GlobalOptions, "output">,
  answer: Printable<T>,
  renderText: (data: T) => string | Promise<string>,
  out: NodeJS.WritableStream = process.stdout,
): Promise<void> {
  if (opts.output === "json") {
    out.write(`${JSON.stringify(answer, null, 2)}\n`);
    return;
  }
  if (opts.output === "yaml") {
    out.write(await toYaml(answer));
    return;
  }
  if (opts.output === "ndjson") {
    const items: unknown[] = Array.isArray(answer.data) ? answer.data : [answer.data];
    for (const item of items) out.write(`${JSON.stringify(item)}\n`);
    const { data: _data, ...rest } = answer;
    out.write(`${JSON.stringify(rest)}\n`);
    return;
  }
  const text = await renderText(answer.data);
  out.write(text.endsWith("\n") ? text : `${text}\n`);
  for (const w of answer.warnings) out.write(`WARNING: ${w}\n`);
}

/** YAML text; the yaml package loads only when something is printed as YAML. */
export async function toYaml(value: unknown): Promise<string> {
  const yaml = await import("yaml");
  // A bundled CommonJS module comes back as the default export of its namespace.
  const { stringify } = (yaml as unknown as { default?: typeof yaml }).default ?? yaml;
  return stringify(value);
}

/** Renders rows as an aligned text table. */
export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map(r => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]))).join("  ");
  return [line(headers), ...rows.map(line)].join("\n");
}

/** A progress line for long operations; it draws only on a terminal, so pipes and logs stay clean. */
export interface Progress {
  tick(done: number, total?: number): void;
  done(): void;
}

/** Redraws `label done/total` on stderr at most every 100 ms while stderr is a TTY. */
export function progress(
  label: string,
  err: NodeJS.WriteStream = process.stderr,
  now: () => number = Date.now,
): Progress {
  const tty = err.isTTY === true;
  let last = 0;
  let drawn = false;
  return {
    tick(done, total) {
      if (!tty) return;
      const t = now();
      if (t - last < 100) return;
      last = t;
      drawn = true;
      err.write(`\r\x1b[K${label} ${done}${total !== undefined ? `/${total}` : ""}`);
    },
    done() {
      if (drawn) err.write("\r\x1b[K");
    },
  };
}
