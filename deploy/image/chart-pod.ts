// The watcher pod as the built chart runs it (dist/krply-chart): each container's command or args
// and its literal environment, and the Secrets it mounts. The image layout test starts exactly
// these from the assembled tree, so a change in the chart changes what the test runs.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";

type Json = Record<string, unknown>;

/** One container of the watcher pod, as far as the image is concerned. */
export interface ChartContainer {
  /** command, or the image's entrypoint (node) followed by args. */
  argv: string[];
  /** Every env entry with a literal value (templated values resolved from values.yaml). */
  env: Record<string, string>;
}

export interface WatcherPod {
  hash: string;
  watcher: ChartContainer;
  sidecar: ChartContainer;
  /** The module Secret's one file, mounted at /app/load. */
  module: { file: string; gz: Buffer };
  /** The TLS Secret, mounted at /etc/certs. */
  tls: { crt: Buffer; key: Buffer };
}

/** The text of one container in the Deployment template, from `- name: <name>` to the next. */
function containerBlock(template: string, name: string): string {
  const start = template.indexOf(`        - name: ${name}\n`);
  if (start < 0) throw new Error(`the watcher Deployment has no container ${name}`);
  const next = template.indexOf("\n        - name: ", start + 1);
  const end = template.indexOf("\n      volumes:", start);
  return template.slice(start, next > 0 && next < end ? next : end);
}

/** A YAML list under `key:` in a block, items of the form `- value`. */
function listUnder(block: string, key: string): string[] {
  const m = new RegExp(`\\n\\s+${key}:\\n((?:\\s+- [^\\n]+\\n?)+)`).exec(block);
  if (!m) return [];
  return m[1]
    .split("\n")
    .map(l => l.trim())
    .filter(l => l.startsWith("- "))
    .map(l => l.slice(2).trim());
}

/** `- name: X` / `value: Y` pairs in a container's env, with values' templates resolved. */
function literalEnv(block: string, values: Json): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of block.matchAll(/- name: (\S+)\n\s+value: ([^\n]+)/g)) {
    const value = m[2].trim();
    // Anything but a plain .Values reference sits in a conditional block the defaults leave out.
    if (value.replace(/\{\{\s*\.Values\.[\w.]+\s*\}\}/g, "").includes("{{")) continue;
    out[m[1]] = resolve(value, values);
  }
  return out;
}

/** Resolves `{{ .Values.a.b }}` and strips YAML quotes. */
function resolve(text: string, values: Json): string {
  const t = text.replace(/\{\{\s*\.Values\.([\w.]+)\s*\}\}/g, (_, path: string) => {
    const v = path.split(".").reduce<unknown>((o, k) => (o as Json | undefined)?.[k], values);
    if (v === undefined) throw new Error(`values.yaml has no ${path}`);
    return String(v);
  });
  return /^".*"$/.test(t) ? (JSON.parse(t) as string) : t;
}

function secretData(chartDir: string, template: string): Record<string, Buffer> {
  const text = readFileSync(join(chartDir, "templates", template), "utf8");
  const doc = parse(text) as { data: Record<string, string> };
  return Object.fromEntries(
    Object.entries(doc.data).map(([k, v]) => [k, Buffer.from(v.replace(/\s/g, ""), "base64")]),
  );
}

/** Reads the watcher pod out of a built chart. */
export function watcherPodOf(chartDir: string): WatcherPod {
  const values = parse(readFileSync(join(chartDir, "values.yaml"), "utf8")) as Json;
  const template = readFileSync(join(chartDir, "templates", "watcher-deployment.yaml"), "utf8");
  const hash = String(values.hash);
  const watcherBlock = containerBlock(template, "watcher");
  const sidecarBlock = containerBlock(template, "api");
  const watcherValues = values.watcher as { env: { name: string; value: string }[] };
  const watcherEnv = {
    ...Object.fromEntries(watcherValues.env.map(e => [e.name, String(e.value)])),
    ...literalEnv(watcherBlock, values),
  };
  const command = listUnder(sidecarBlock, "command");
  // Finalize carries the bundle as the value module.{key,data} (deploy/finalize/module-value.ts).
  const mod = values.module as { key: string; data: string } | undefined;
  const moduleData = mod
    ? { [mod.key]: Buffer.from(mod.data, "base64") }
    : secretData(chartDir, "module-secret.yaml");
  const [file] = Object.keys(moduleData);
  const tls = secretData(chartDir, "tls-secret.yaml");
  return {
    hash,
    // The watcher gives args only: the image's entrypoint runs them with node.
    watcher: {
      argv: ["node", ...listUnder(watcherBlock, "args").map(a => resolve(a, values))],
      env: watcherEnv,
    },
    sidecar: { argv: command, env: literalEnv(sidecarBlock, values) },
    module: { file, gz: moduleData[file] },
    tls: { crt: tls["tls.crt"], key: tls["tls.key"] },
  };
}

/** The CustomResourceDefinitions the chart installs before its pods (templates/crd-*.yaml). */
export function chartCrds(chartDir: string): { name: string; yaml: string }[] {
  const dir = join(chartDir, "templates");
  return readdirSync(dir)
    .filter(f => /^crd-\d+\.yaml$/.test(f))
    .map(f => {
      const yaml = readFileSync(join(dir, f), "utf8");
      const doc = parse(yaml) as { metadata: { name: string } };
      return { name: doc.metadata.name, yaml };
    });
}
