/**
 * Moves the module bundle out of module-secret.yaml's text into a chart value. Helm stores a release
 * as one Secret of at most 1 MiB holding the chart (templates as base64 bytes) and the rendered
 * manifest: the bundle's gzip-and-base64 text, kept as template text, was stored base64-encoded once
 * more and pushed the record over the limit. As a value it is stored as plain JSON text.
 */
export function withModuleValue(template: string): { template: string; key: string; data: string } {
  const match = /^data:\n {2}(\S+\.js\.gz): >-\n((?: {4}\S+\n)+)/m.exec(template);
  if (!match)
    throw new Error("module-secret.yaml is not what finalize expects (data: <module>.js.gz)");
  const data = match[2].replace(/\s+/g, "");
  const text = template.replace(
    match[0],
    "data:\n  {{ .Values.module.key }}: {{ .Values.module.data }}\n",
  );
  return { template: text, key: match[1], data };
}
