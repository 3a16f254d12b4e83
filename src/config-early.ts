// Settings a process reads alone, before or without its configuration: src/config.ts builds zod and
// the whole settings schema at import, which a CLI read by --store must not pay for (see
// docs/benchmarks.md, CLI start-up). config.ts re-exports these, so the rules stay in one place.

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
