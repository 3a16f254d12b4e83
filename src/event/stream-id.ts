import type { StreamKey } from "./schema";

// Empty components are common (core group, all namespaces, no selector), so they print as "-".
// A literal "-" is escaped so the mapping stays one-to-one.
const EMPTY = "-";
const FIELDS = ["clusterId", "group", "version", "resource", "namespace", "selector"] as const;
/** The parts a stream key cannot leave empty (StreamKeySchema's min(1) fields). */
const REQUIRED = new Set<string>(["clusterId", "version", "resource"]);

function encodePart(value: string): string {
  if (value === "") return EMPTY;
  if (value === EMPTY) return "%2D";
  return encodeURIComponent(value);
}

function decodePart(part: string): string {
  if (part === EMPTY) return "";
  return decodeURIComponent(part);
}

/** Prints a stream key as a stable id: cluster/group/version/resource/namespace/selector. */
export function streamIdOf(key: StreamKey): string {
  return FIELDS.map(f => encodePart(key[f])).join("/");
}

/** Parses an id printed by streamIdOf back into its key; throws on anything else. */
export function parseStreamId(id: string): StreamKey {
  const parts = id.split("/");
  if (parts.length !== FIELDS.length) {
    throw new Error(`invalid stream id "${id}": want ${FIELDS.length} "/"-separated parts`);
  }
  let decoded: string[];
  try {
    decoded = parts.map(decodePart);
  } catch (err) {
    throw new Error(`invalid stream id "${id}": bad percent-encoding`, { cause: err });
  }
  // Checked by hand, not with StreamKeySchema: every journal read parses stream ids, and a CLI read
  // must not load zod for it (docs/benchmarks.md, CLI start-up). The checks are the schema's.
  const empty = FIELDS.filter((f, i) => REQUIRED.has(f) && decoded[i] === "");
  if (empty.length > 0) {
    throw new Error(`invalid stream id "${id}": ${empty.join(", ")} must not be empty`);
  }
  const key = Object.fromEntries(FIELDS.map((f, i) => [f, decoded[i]])) as StreamKey;
  if (streamIdOf(key) !== id) {
    throw new Error(`invalid stream id "${id}": not in canonical form`);
  }
  return key;
}
