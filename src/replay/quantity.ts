const BINARY: Record<string, number> = {
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};
const DECIMAL: Record<string, number> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  "": 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
};

/** Parses a Kubernetes quantity ("250m", "1Gi", "1e3") into a number, or null when it is not one. */
export function parseQuantity(text: unknown): number | null {
  if (typeof text === "number") return text;
  if (typeof text !== "string") return null;
  const m = /^([+-]?[0-9.]+)(?:([eE][+-]?[0-9]+)|(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?)$/.exec(
    text.trim(),
  );
  if (!m) return null;
  const n = Number(m[1]);
  if (Number.isNaN(n)) return null;
  if (m[2]) return n * 10 ** Number(m[2].slice(1));
  const suffix = m[3] ?? "";
  return n * (BINARY[suffix] ?? DECIMAL[suffix]);
}
