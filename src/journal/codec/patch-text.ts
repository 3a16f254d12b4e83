// The stored text of a patch. As a JSON array every op spends eight characters on brackets, quotes
// and commas, a large share of a small record. The line form spends three: one op per line, a
// one-digit op code, the path as is, and the value as JSON after a \u0001. JSON output never holds a
// raw newline or \u0001 (it escapes control characters), so only paths need checking; a patch with
// such a path keeps the JSON form.
import type { OpTuple } from "./delta";

const SEP = "\u0001";

function plainPath(path: string): boolean {
  return path.indexOf("\n") < 0 && path.indexOf(SEP) < 0;
}

// Characters JSON.stringify escapes in a string: quote, backslash, control characters, and (lone)
// surrogates, which the fast path below leaves to JSON.stringify whether paired or not.
// eslint-disable-next-line no-control-regex -- the control characters are what JSON escapes
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/**
 * JSON.stringify(v), byte for byte, without its call for the primitives most ops carry: a patch of
 * a few short values spent as long in those calls as in the rest of its line form.
 */
export function jsonOf(v: unknown): string {
  if (typeof v === "string") return NEEDS_ESCAPE.test(v) ? JSON.stringify(v) : `"${v}"`;
  // Number's own spelling is the one JSON uses for finite numbers (-0 included: both give "0").
  if (typeof v === "number") return Number.isFinite(v) ? String(v) : "null";
  if (typeof v === "boolean") return v ? "true" : "false";
  if (v === null) return "null";
  return JSON.stringify(v);
}

/** The line form of a patch, or null when a path holds a newline or \u0001. */
export function tuplesToLines(tuples: OpTuple[]): string | null {
  let out = "";
  for (let i = 0; i < tuples.length; i++) {
    const t = tuples[i];
    if (i > 0) out += "\n";
    if (t[0] === 4) {
      out += "4" + jsonOf(t[1]);
      continue;
    }
    if (!plainPath(t[1])) return null;
    if (t[0] === 2 || t[0] === 3) out += String(t[0]) + t[1];
    else if (t[0] === 5) out += "5" + t[1] + SEP + String(t[2]);
    else out += String(t[0]) + t[1] + SEP + jsonOf(t[2]);
  }
  return out;
}

function corrupt(line: string): Error {
  return new Error(`corrupt patch line ${JSON.stringify(line.slice(0, 80))}`);
}

/** Parses the line form back into op tuples. */
export function linesToTuples(text: string): OpTuple[] {
  if (text === "") return [];
  return text.split("\n").map((line): OpTuple => {
    const code = line.charCodeAt(0) - 48;
    const rest = line.slice(1);
    if (code === 4) return [4, JSON.parse(rest)];
    if (code === 2 || code === 3) return [code, rest];
    const at = rest.indexOf(SEP);
    if (at < 0) throw corrupt(line);
    const path = rest.slice(0, at);
    const value = rest.slice(at + 1);
    if (code === 5) {
      const k = Number(value);
      if (!Number.isInteger(k)) throw corrupt(line);
      return [5, path, k];
    }
    if (code === 0 || code === 1) return [code, path, JSON.parse(value)];
    throw corrupt(line);
  });
}
