import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseAllDocuments } from "yaml";
import { z } from "zod";
import { clientFor, loadKubeConfig, type KubeClient } from "../src/kube/client";

// `npm run deploy`: a server-side apply of the finalized manifests (dist/pepr-module-krply.yaml)
// that `npm run build` writes. It replaces `npx pepr deploy`, which builds its objects in code and
// cannot carry the webhook's object selector, the journal volume or the sidecar: its first step
// would install a webhook that fails every core-group write until the pods run.

const FIELD_MANAGER = "krply-deploy";

/** Where each kind the manifests hold lives in the API; anything else is refused before a write. */
const KINDS: Record<string, { plural: string; namespaced: boolean }> = {
  Namespace: { plural: "namespaces", namespaced: false },
  CustomResourceDefinition: { plural: "customresourcedefinitions", namespaced: false },
  ClusterRole: { plural: "clusterroles", namespaced: false },
  ClusterRoleBinding: { plural: "clusterrolebindings", namespaced: false },
  Role: { plural: "roles", namespaced: true },
  RoleBinding: { plural: "rolebindings", namespaced: true },
  ServiceAccount: { plural: "serviceaccounts", namespaced: true },
  Secret: { plural: "secrets", namespaced: true },
  Service: { plural: "services", namespaced: true },
  PersistentVolumeClaim: { plural: "persistentvolumeclaims", namespaced: true },
  Deployment: { plural: "deployments", namespaced: true },
  ValidatingWebhookConfiguration: {
    plural: "validatingwebhookconfigurations",
    namespaced: false,
  },
  MutatingWebhookConfiguration: { plural: "mutatingwebhookconfigurations", namespaced: false },
};

/** Applied first: what the others live in or refer to. Webhooks go last, once their Service exists. */
const ORDER = ["Namespace", "CustomResourceDefinition", "ServiceAccount", "ClusterRole", "Role"];
const LAST = ["ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"];

// Loose: the rest of each object (spec, data, rules) is applied as it is, unexamined.
const manifest = z
  .object({
    apiVersion: z.string().min(1),
    kind: z.string().min(1),
    metadata: z.object({ name: z.string().min(1), namespace: z.string().optional() }).loose(),
  })
  .loose();
export type Manifest = z.infer<typeof manifest>;

/** The manifests of a multi-document YAML file, validated, in the order they are applied. */
export function manifestsOf(text: string): Manifest[] {
  const docs = parseAllDocuments(text)
    .map(d => d.toJS() as unknown)
    .filter(d => d !== null)
    .map((d, i) => {
      const parsed = manifest.safeParse(d);
      if (!parsed.success) throw new Error(`document ${i + 1} is not a Kubernetes object`);
      if (!KINDS[parsed.data.kind]) {
        throw new Error(`document ${i + 1} is a ${parsed.data.kind}, which deploy does not apply`);
      }
      return parsed.data;
    });
  const rank = (m: Manifest) => {
    const first = ORDER.indexOf(m.kind);
    if (first >= 0) return first;
    return LAST.includes(m.kind) ? ORDER.length + 2 : ORDER.length + 1;
  };
  return docs
    .map((d, i) => ({ d, i }))
    .sort((a, b) => rank(a.d) - rank(b.d) || a.i - b.i)
    .map(x => x.d);
}

/** The API path of one object: /api/v1/... for the core group, /apis/<group>/<version>/... else. */
export function pathOf(m: Manifest): string {
  const kind = KINDS[m.kind];
  const base = m.apiVersion.includes("/") ? `/apis/${m.apiVersion}` : `/api/${m.apiVersion}`;
  const ns = kind.namespaced ? `/namespaces/${m.metadata.namespace ?? "default"}` : "";
  return `${base}${ns}/${kind.plural}/${m.metadata.name}`;
}

/** Server-side applies every object, taking ownership of fields another manager set (force). */
export async function applyManifests(
  client: KubeClient,
  manifests: Manifest[],
  onApplied: (m: Manifest) => void = () => {},
): Promise<void> {
  for (const m of manifests) {
    try {
      await client.json(pathOf(m), {
        method: "PATCH",
        query: { fieldManager: FIELD_MANAGER, force: true },
        body: m,
        contentType: "application/apply-patch+yaml",
      });
    } catch (err) {
      throw new Error(`applying ${m.kind} ${m.metadata.name} failed`, { cause: err });
    }
    onApplied(m);
  }
}

function causes(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err; e instanceof Error; e = e.cause) parts.push(e.message);
  return parts.join(": ") || String(err);
}

async function main(argv: string[]): Promise<void> {
  const at = argv.indexOf("--kubeconfig");
  const kubeconfig = at >= 0 ? argv[at + 1] : undefined;
  const rest = argv.filter((_, i) => i !== at && i !== at + 1);
  const file = resolve(rest[0] ?? join(__dirname, "..", "dist", "pepr-module-krply.yaml"));
  const manifests = manifestsOf(readFileSync(file, "utf8"));
  const client = await clientFor(loadKubeConfig({ kubeconfig }));
  try {
    await applyManifests(client, manifests, m =>
      console.log(
        `applied ${m.kind} ${m.metadata.namespace ? `${m.metadata.namespace}/` : ""}${m.metadata.name}`,
      ),
    );
  } finally {
    await client.close();
  }
  console.log(`deploy: ${manifests.length} objects applied from ${file}`);
}

if (require.main === module) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    console.error(`deploy: ${causes(err)}`);
    process.exit(1);
  });
}
