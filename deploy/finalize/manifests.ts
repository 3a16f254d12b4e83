import {
  apiService,
  journalClaim,
  krplyMounts,
  sidecarContainer,
  watcherAdditions,
  type KrplySettings,
} from "./objects";
import { watcherProbes } from "./observability";
import { validatingWebhooks, type WebhookBase } from "./webhook";

type Json = Record<string, unknown>;

interface Container {
  name: string;
  env?: Json[];
  ports?: Json[];
  volumeMounts?: Json[];
}

/**
 * Applies the finalize step to the manifests Pepr renders (dist/pepr-module-krply.yaml), with the
 * same object builders the chart uses. Only the digest-key Secret is chart-only: without it the
 * recorder keeps its key in a file of its own beside the journal (docs/config.md).
 */
export function finalizeManifests(
  docs: Json[],
  webhook: WebhookBase,
  settings: KrplySettings,
  crds: Json[],
  replayRole: Json,
): Json[] {
  const out: Json[] = [];
  for (const doc of docs) {
    const kind = doc.kind as string | undefined;
    const name = (doc.metadata as { name?: string } | undefined)?.name;
    if (kind === "ValidatingWebhookConfiguration") {
      out.push({ ...doc, webhooks: validatingWebhooks(webhook) });
    } else if (kind === "RoleBinding" && name === `${settings.name}-store`) {
      out.push({
        ...doc,
        subjects: [{ kind: "ServiceAccount", name: settings.name, namespace: settings.namespace }],
      });
    } else if (kind === "Deployment" && name === `${settings.name}-watcher`) {
      out.push(withSidecar(doc, settings));
    } else {
      out.push(doc);
    }
  }
  return [...out, ...crds, journalClaim(settings), apiService(settings), replayRole];
}

function withSidecar(deployment: Json, settings: KrplySettings): Json {
  const spec = structuredClone(deployment.spec) as {
    template: { spec: { containers: Container[]; volumes?: Json[] } };
  };
  const pod = spec.template.spec;
  const add = watcherAdditions();
  const mounts = add.mounts.filter(m => m.name !== "digest-key");
  const env = add.env.filter(e => e.name !== "KRPLY_REDACT_KEY_FILE");
  pod.containers = [
    ...pod.containers.map(c =>
      c.name !== "watcher"
        ? c
        : {
            ...c,
            ...watcherProbes(),
            env: [...env, ...(c.env ?? [])],
            ports: [...add.ports, ...(c.ports ?? [])],
            volumeMounts: [...mounts, ...(c.volumeMounts ?? [])],
          },
    ),
    {
      ...(sidecarContainer(settings) as unknown as Container),
      env: (sidecarContainer(settings).env as Json[]).filter(
        e => e.name !== "KRPLY_REDACT_KEY_FILE",
      ),
      volumeMounts: krplyMounts().filter(m => m.name !== "digest-key"),
    },
  ];
  pod.volumes = [
    { name: "journal", persistentVolumeClaim: { claimName: `${settings.name}-journal` } },
    { name: "tmp", emptyDir: {} },
    ...(pod.volumes ?? []),
  ];
  return { ...deployment, spec };
}
