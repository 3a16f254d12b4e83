import { createHash } from "node:crypto";
import { canonicalJson, MANIFEST_COPY_ANNOTATIONS } from "../../event";

/** Resolved redaction policy: a set of kinds (always including Secret) and ConfigMap key patterns. */
export interface RedactPolicy {
  kinds: ReadonlySet<string>;
  configMapKeyPatterns: readonly RegExp[];
  /** Annotations that hold a copy of the manifest, digested on every redacted object. */
  annotations?: readonly string[];
  /**
   * The digest key. It lives outside the journal file, so that whoever holds the file cannot test
   * guesses of a low-entropy value against its digest.
   */
  salt: string;
  /**
   * Store objects as given: they come from another journal (a salvage) and were redacted when first
   * written there; redacting again would digest the digests.
   */
  verbatim?: boolean;
}

export const REDACTED_PREFIX = "krply-redacted:sha256:";

// Fields that describe an object rather than hold its payload; everything else of a listed kind is digested.
const KEEP_TOP_LEVEL = new Set(["apiVersion", "kind", "metadata", "type", "immutable"]);

/** Salted digest of one value, in the form stored instead of the value. */
export function digestValue(value: unknown, salt: string): string {
  const text = typeof value === "string" ? value : canonicalJson(value);
  const hex = createHash("sha256").update(salt).update("\u0000").update(text).digest("hex");
  return REDACTED_PREFIX + hex.slice(0, 32);
}

function digestMap(
  map: unknown,
  salt: string,
  match?: (key: string) => boolean,
): { out: unknown; hit: boolean } {
  if (map === null || typeof map !== "object" || Array.isArray(map)) {
    return { out: digestValue(map, salt), hit: true };
  }
  const out: Record<string, unknown> = {};
  let hit = false;
  for (const [k, v] of Object.entries(map as Record<string, unknown>)) {
    if (!match || match(k)) {
      out[k] = digestValue(v, salt);
      hit = true;
    } else {
      out[k] = v;
    }
  }
  return { out, hit };
}

function withoutManifestCopies(
  meta: Record<string, unknown>,
  policy: RedactPolicy,
): Record<string, unknown> {
  const ann = meta.annotations as Record<string, unknown> | undefined;
  if (!ann || typeof ann !== "object") return meta;
  let out: Record<string, unknown> | null = null;
  for (const key of policy.annotations ?? MANIFEST_COPY_ANNOTATIONS) {
    if (!(key in ann)) continue;
    // The tool copied the whole manifest, values included, into this annotation.
    out ??= { ...ann };
    out[key] = digestValue(ann[key], policy.salt);
  }
  return out ? { ...meta, annotations: out } : meta;
}

/** Returns the object with secret values replaced by digests, or the same object when nothing applies. */
export function redactObject(
  object: Record<string, unknown>,
  kind: string,
  policy: RedactPolicy,
): { object: Record<string, unknown>; redacted: boolean } {
  if (policy.verbatim) return { object, redacted: false };
  const meta = (object.metadata ?? {}) as Record<string, unknown>;
  if (kind === "Secret" || policy.kinds.has(kind)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(object)) {
      out[k] = KEEP_TOP_LEVEL.has(k) ? v : digestMap(v, policy.salt).out;
    }
    out.metadata = withoutManifestCopies(meta, policy);
    return { object: out, redacted: true };
  }
  if (kind === "ConfigMap" && policy.configMapKeyPatterns.length > 0) {
    const match = (key: string): boolean => policy.configMapKeyPatterns.some(p => p.test(key));
    const out: Record<string, unknown> = { ...object };
    let hit = false;
    for (const field of ["data", "binaryData"]) {
      if (object[field] === undefined) continue;
      const r = digestMap(object[field], policy.salt, match);
      out[field] = r.out;
      hit ||= r.hit;
    }
    if (!hit) return { object, redacted: false };
    out.metadata = withoutManifestCopies(meta, policy);
    return { object: out, redacted: true };
  }
  return { object, redacted: false };
}
