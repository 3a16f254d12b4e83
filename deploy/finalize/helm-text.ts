import { stringify } from "yaml";

const MARK = "@@";

/** A value the chart fills in at render time: a Helm expression in place of a concrete value. */
export function helm(expression: string): string {
  return `${MARK}{{ ${expression} }}${MARK}`;
}

/**
 * Renders objects as a Helm template: YAML whose marked strings become bare Helm expressions, so a
 * number or a block comes out unquoted (`port: {{ .Values.x }}`), and an object preceded by a
 * condition is wrapped in it.
 */
export function templateOf(
  objects: readonly Record<string, unknown>[],
  condition?: string,
): string {
  const body = objects
    .map(o => stringify(o, { lineWidth: 0, aliasDuplicateObjects: false }))
    .join("---\n")
    .replace(/(['"])@@(\{\{.*?\}\})@@\1/g, "$2")
    .replace(/@@(\{\{.*?\}\})@@/g, "$1");
  return condition ? `{{- if ${condition} }}\n${body}{{- end }}\n` : body;
}
