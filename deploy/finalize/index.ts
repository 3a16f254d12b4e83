import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parse, parseAllDocuments, stringify } from "yaml";
import { finalizeChart, KRPLY_VALUES } from "./chart";
import { finalizeManifests } from "./manifests";
import type { KrplySettings } from "./objects";
import { rbacViolations, replayRules, type PolicyRule } from "./rbac";
import { webhookBaseOf } from "./webhook";

export { finalizeChart } from "./chart";
export { finalizeManifests } from "./manifests";
export * from "./rbac";
export { PLAN_LABEL, validatingWebhooks } from "./webhook";
export { WATCHER_PROBE_PATHS, serviceMonitorTemplate } from "./observability";
export { undocumentedValues, VALUE_DOCS } from "./values-docs";

type Json = Record<string, unknown>;

const root = resolve(__dirname, "..", "..");

function replayRole(name: string, resources: readonly string[]): Json {
  return {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name: `${name}-replay` },
    rules: replayRules(resources),
  };
}

function moduleEnv(pkg: Json): Record<string, string> {
  return ((pkg.pepr as Json).env ?? {}) as Record<string, string>;
}

/**
 * Runs after `pepr build`: rewrites dist/krply-chart and dist/pepr-module-krply.yaml in place. It
 * fails the build on any RBAC wildcard or Secrets access the configuration did not ask for.
 */
export function finalizeBuild(dist = join(root, "dist")): void {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as Json;
  const env = moduleEnv(pkg);
  const resources = (env.KRPLY_RESOURCES ?? "").split(",").filter(r => r.trim() !== "");
  const allowSecrets = resources.some(r => r.trim() === "secrets");
  const uuid = `pepr-${String((pkg.pepr as Json).uuid)}`;

  const manifestPath = join(dist, `pepr-module-${String((pkg.pepr as Json).uuid)}.yaml`);
  const docs = parseAllDocuments(readFileSync(manifestPath, "utf8")).map(d => d.toJS() as Json);
  const webhookDoc = docs.find(d => d.kind === "ValidatingWebhookConfiguration");
  if (!webhookDoc) throw new Error(`${manifestPath} has no ValidatingWebhookConfiguration`);
  const timeout = Number((pkg.pepr as Json).webhookTimeout ?? 10);
  const base = webhookBaseOf(webhookDoc, timeout, []);
  const crdTexts = ["replayplan.yaml", "peprstore.yaml"].map(f =>
    readFileSync(join(root, "deploy", "crds", f), "utf8"),
  );
  const role = replayRole(uuid, resources);

  const settings: KrplySettings = {
    name: uuid,
    namespace: base.namespace,
    image: imageOf(docs),
    // The chart's default values, so both install paths start from the same settings.
    journalSize: KRPLY_VALUES.journal.size,
    storageClassName: KRPLY_VALUES.journal.storageClassName,
    apiAuth: KRPLY_VALUES.api.auth,
    sidecarResources: KRPLY_VALUES.api.resources,
  };
  const finalDocs = finalizeManifests(
    docs,
    base,
    settings,
    crdTexts.map(t => parse(t) as Json),
    role,
  );
  const roles = finalDocs
    .filter(d => d.kind === "ClusterRole")
    .flatMap(d => (d.rules ?? []) as PolicyRule[]);
  assertRbac(roles, allowSecrets, manifestPath);
  writeFileSync(manifestPath, finalDocs.map(d => stringify(d, { lineWidth: 0 })).join("---\n"));

  const chartDir = join(dist, `${String((pkg.pepr as Json).uuid)}-chart`);
  const templatesDir = join(chartDir, "templates");
  const templates = new Map(
    readdirSync(templatesDir).map(f => [f, readFileSync(join(templatesDir, f), "utf8")] as const),
  );
  const values = parse(readFileSync(join(chartDir, "values.yaml"), "utf8")) as Json;
  assertRbac((values.rbac ?? []) as PolicyRule[], allowSecrets, "the chart's values.rbac");
  const schema = JSON.parse(readFileSync(join(chartDir, "values.schema.json"), "utf8")) as Json;
  const chart = finalizeChart({ templates, values, schema }, base, crdTexts, {
    ...role,
    // A Helm expression, then literal text: the marker closes before the suffix.
    metadata: { name: "@@{{ .Values.uuid }}@@-replay" },
  });
  for (const f of templates.keys()) if (!chart.templates.has(f)) rmSync(join(templatesDir, f));
  for (const [f, text] of chart.templates) writeFileSync(join(templatesDir, f), text);
  writeFileSync(join(chartDir, "values.yaml"), stringify(chart.values, { lineWidth: 0 }));
  writeFileSync(join(chartDir, "values.schema.json"), `${JSON.stringify(chart.schema, null, 2)}\n`);
}

function imageOf(docs: Json[]): string {
  const deployment = docs.find(d => d.kind === "Deployment") as
    | { spec: { template: { spec: { containers: { image: string }[] } } } }
    | undefined;
  return deployment?.spec.template.spec.containers[0]?.image ?? "";
}

function assertRbac(rules: PolicyRule[], allowSecrets: boolean, where: string): void {
  const problems = rbacViolations(rules, allowSecrets);
  if (problems.length > 0) {
    throw new Error(`${where} grants too much:\n  ${problems.join("\n  ")}`);
  }
}

if (require.main === module) {
  try {
    finalizeBuild(process.argv[2] ? resolve(process.argv[2]) : undefined);
    console.log(
      "finalize: webhook narrowed to plan-labelled objects, RBAC scoped, journal, sidecar and CRDs added",
    );
  } catch (err) {
    console.error(`finalize: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  }
}
