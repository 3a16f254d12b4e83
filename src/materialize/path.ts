/** One step into an object: a map key, a list index, or a list item chosen by a key field. */
export type PathSegment = string | number | { key: string; value: string | number | boolean };

// Keys like `app.kubernetes.io/name` or `a[0]` must stay one segment, so these characters are escaped.
const KEY_SPECIAL = /[\\.[\]]/g;
const VALUE_SPECIAL = /[\\\]=]/g;
const SELECTOR_KEY_SPECIAL = /[\\.[\]=]/g;

/** Escapes a map key so dots and brackets in it cannot be read as path syntax. */
export function escapeKey(key: string): string {
  return key.replace(KEY_SPECIAL, c => `\\${c}`);
}

function escapeValue(v: string | number | boolean): string {
  // Strings are quoted when they would read back as another JSON type, so the round trip is exact.
  if (typeof v !== "string") return JSON.stringify(v);
  const looksTyped = /^(?:-?\d|true$|false$|")/.test(v);
  return looksTyped
    ? JSON.stringify(v).replace(VALUE_SPECIAL, c => `\\${c}`)
    : v.replace(VALUE_SPECIAL, c => `\\${c}`);
}

/** Prints a path as `spec.containers[name=app].env[name=A\.B].value`, escaping keys. */
export function formatPath(segments: readonly PathSegment[]): string {
  let out = "";
  segments.forEach((s, i) => {
    if (typeof s === "number") out += `[${s}]`;
    else if (typeof s === "string") out += i === 0 ? escapeKey(s) : `.${escapeKey(s)}`;
    else out += `[${s.key.replace(SELECTOR_KEY_SPECIAL, c => `\\${c}`)}=${escapeValue(s.value)}]`;
  });
  return out;
}

function unescapeAt(text: string, i: number): [string, number] {
  if (i + 1 >= text.length) throw new Error(`path "${text}" ends with a lone backslash`);
  return [text[i + 1], i + 2];
}

function parseValue(raw: string, quoted: boolean): string | number | boolean {
  if (!quoted) return raw;
  try {
    return JSON.parse(raw) as string | number | boolean;
  } catch (err) {
    throw new Error(`path selector value ${raw} is not valid JSON`, { cause: err });
  }
}

/** Parses a path printed by formatPath back into its segments; throws on malformed input. */
export function parsePath(text: string): PathSegment[] {
  const out: PathSegment[] = [];
  let i = 0;
  const readUntil = (stops: string): string => {
    let buf = "";
    while (i < text.length && !stops.includes(text[i])) {
      if (text[i] === "\\") {
        const [c, next] = unescapeAt(text, i);
        buf += c;
        i = next;
      } else buf += text[i++];
    }
    return buf;
  };
  let expectKey = true;
  while (i < text.length) {
    if (text[i] === "[") {
      i++;
      const head = readUntil("=]");
      if (text[i] === "]") {
        if (!/^\d+$/.test(head)) throw new Error(`path "${text}": index "${head}" is not a number`);
        out.push(Number(head));
        i++;
      } else if (text[i] === "=") {
        i++;
        const quoted = text[i] !== undefined && /[-\d"tf]/.test(text[i]);
        const raw = readUntil("]");
        if (text[i] !== "]") throw new Error(`path "${text}": unclosed selector`);
        i++;
        const value = quoted && /^(?:-?\d|true$|false$|")/.test(raw) ? parseValue(raw, true) : raw;
        out.push({ key: head, value });
      } else throw new Error(`path "${text}": unclosed bracket`);
      expectKey = false;
    } else if (text[i] === ".") {
      if (expectKey) throw new Error(`path "${text}": empty key at ${i}`);
      i++;
      expectKey = true;
      out.push(readUntil(".["));
      expectKey = false;
    } else {
      if (!expectKey) throw new Error(`path "${text}": unexpected "${text[i]}" at ${i}`);
      out.push(readUntil(".["));
      expectKey = false;
    }
  }
  return out;
}
