/** Metadata the API server writes on every change; it never says anything about intent. */
export const SERVER_METADATA = [
  "managedFields",
  "resourceVersion",
  "uid",
  "generation",
  "creationTimestamp",
  "selfLink",
] as const;

export interface NormalizeOptions {
  /** Keep `status` (dropped by default: controllers rewrite it constantly). */
  includeStatus?: boolean;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * Drops server-written metadata (and status unless asked) from a copy of the object. Only these
 * exact top-level fields go: empty maps, empty lists and nulls elsewhere carry meaning and stay.
 */
export function withoutServerFields(
  object: Record<string, unknown>,
  opts: NormalizeOptions = {},
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...object };
  if (!opts.includeStatus) delete out.status;
  if (isRecord(object.metadata)) {
    const md: Record<string, unknown> = { ...object.metadata };
    for (const k of SERVER_METADATA) delete md[k];
    out.metadata = md;
  }
  return out;
}
