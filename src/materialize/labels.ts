/** One requirement of an equality-based label selector. */
export type LabelRequirement =
  | { key: string; op: "=" | "!="; value: string }
  | { key: string; op: "exists" | "!exists" };

/** Parses `a=b,c!=d,e,!f` (equality and existence forms; set forms are not supported). */
export function parseLabelSelector(text: string): LabelRequirement[] {
  if (text.trim() === "") return [];
  return text.split(",").map(part => {
    const p = part.trim();
    const m = /^([^=!\s]+)\s*(==|=|!=)\s*([^=!\s]*)$/.exec(p);
    if (m) return { key: m[1], op: m[2] === "!=" ? "!=" : "=", value: m[3] };
    if (/^![^=!\s]+$/.test(p)) return { key: p.slice(1), op: "!exists" };
    if (/^[^=!\s]+$/.test(p)) return { key: p, op: "exists" };
    throw new Error(`label selector part "${p}" is not key=value, key!=value, key or !key`);
  });
}

/** Does a label map satisfy every requirement? */
export function matchesLabels(
  labels: Record<string, string> | undefined,
  reqs: LabelRequirement[],
): boolean {
  const l = labels ?? {};
  return reqs.every(r => {
    const has = Object.prototype.hasOwnProperty.call(l, r.key);
    switch (r.op) {
      case "=":
        return has && l[r.key] === r.value;
      case "!=":
        return !has || l[r.key] !== r.value;
      case "exists":
        return has;
      case "!exists":
        return !has;
    }
  });
}
