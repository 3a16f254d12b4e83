// Numeric flags of the benchmarks (`--name N`), checked the same way in every bench.

/** The word after `--name`, or undefined when the flag is absent. */
export function stringFlag(args: string[], name: string): string | undefined {
  const i = args.indexOf(`--${name}`);
  return i < 0 ? undefined : args[i + 1];
}

/** The text of a numeric flag ("" when it has no value), or undefined when it is absent. */
function raw(args: string[], name: string): string | undefined {
  return args.includes(`--${name}`) ? (stringFlag(args, name) ?? "") : undefined;
}

/** A positive number (`zeroOk`: or 0), or `def` when the flag is absent. */
export function numberFlag(
  args: string[],
  name: string,
  def: number,
  opts: { zeroOk?: boolean } = {},
): number {
  const text = raw(args, name);
  if (text === undefined) return def;
  const v = Number(text);
  if (!Number.isFinite(v) || v < 0 || (v === 0 && !opts.zeroOk))
    throw new Error(`--${name} needs a positive number, got "${text}"`);
  return v;
}

/** A positive whole number, or `def` when the flag is absent. */
export function wholeFlag(args: string[], name: string, def: number): number {
  const text = raw(args, name);
  if (text === undefined) return def;
  const v = Number(text);
  if (!Number.isInteger(v) || v <= 0)
    throw new Error(`--${name} needs a positive whole number, got "${text}"`);
  return v;
}
