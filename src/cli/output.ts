import { stringify } from "yaml";
import type { Answer } from "../materialize";
import type { GlobalOptions } from "./program";

/** What the CLI prints: materialize's answer, or plain data with warnings (e.g. a list). */
export type Printable<T> = Pick<Answer<T>, "data" | "warnings"> &
  Partial<Pick<Answer<T>, "coverage">>;

/** Prints an answer in the chosen format; warnings go next to it, never dropped. */
export function printAnswer<T>(
  opts: Pick<GlobalOptions, "output">,
  answer: Printable<T>,
  renderText: (data: T) => string,
  out: NodeJS.WritableStream = process.stdout,
): void {
  if (opts.output === "json") {
    out.write(`${JSON.stringify(answer, null, 2)}\n`);
    return;
  }
  if (opts.output === "yaml") {
    out.write(stringify(answer));
    return;
  }
  const text = renderText(answer.data);
  out.write(text.endsWith("\n") ? text : `${text}\n`);
  for (const w of answer.warnings) out.write(`WARNING: ${w}\n`);
}

/** Renders rows as an aligned text table. */
export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map(r => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]))).join("  ");
  return [line(headers), ...rows.map(line)].join("\n");
}
