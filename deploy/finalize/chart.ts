import { helm, templateOf } from "./helm-text";
import {
  apiService,
  journalClaim,
  sidecarContainer,
  watcherAdditions,
  krplyVolumes,
  type KrplySettings,
} from "./objects";
import { withKrplySchema } from "./krply-schema";
import { withModuleValue } from "./module-value";
import { serviceMonitorTemplate, SERVICE_MONITOR_VALUES, watcherProbes } from "./observability";
import { describeValues, inlineRefs, withOpenMaps } from "./values-docs";
import { validatingWebhooks, type WebhookBase } from "./webhook";
import { stringify } from "yaml";

/** The chart as files: template name to text, plus values and their schema. */
export interface ChartFiles {
  templates: Map<string, string>;
  values: Record<string, unknown>;
  schema: Record<string, unknown>;
}

/** Values under `krply:` that our templates read; values.schema.json describes each. */
export const KRPLY_VALUES = {
  journal: { size: "10Gi", storageClassName: "" },
  api: {
    auth: "kubernetes",
    resources: {
      requests: { memory: "128Mi", cpu: "50m" },
      limits: { memory: "256Mi", cpu: "500m" },
    },
  },
  replay: { namespaces: [] as string[] },
  serviceMonitor: SERVICE_MONITOR_VALUES,
};

const chartSettings: KrplySettings = {
  name: helm(".Values.uuid"),
  namespace: helm(".Release.Namespace"),
  image: helm(".Values.watcher.image"),
  journalSize: helm(".Values.krply.journal.size"),
  storageClassName: helm(".Values.krply.journal.storageClassName"),
  apiAuth: helm(".Values.krply.api.auth"),
  sidecarResources: helm("toJson .Values.krply.api.resources"),
};

/** Pepr's templates name this namespace throughout, and Pepr's controller keeps its Store there. */
const GUARD = `{{- if ne .Release.Namespace "pepr-system" }}
{{- fail (printf "krply installs into the pepr-system namespace, where Pepr's controllers and Store live: helm install krply <chart> -n pepr-system --create-namespace (this release is in %q)" .Release.Namespace) }}
{{- end }}
`;

const DIGEST_SECRET = `{{- $name := printf "%s-digest-key" .Values.uuid }}
{{- $old := lookup "v1" "Secret" .Release.Namespace $name }}
apiVersion: v1
kind: Secret
metadata:
  name: {{ $name }}
  namespace: {{ .Release.Namespace }}
  annotations:
    # The key salts every redaction digest in the journal: a new key would make old and new digests of
    # the same value differ, so it is created once and kept across upgrades and uninstalls.
    helm.sh/resource-policy: keep
type: Opaque
data:
  key: {{ if $old }}{{ index $old.data "key" }}{{ else }}{{ randAlphaNum 48 | b64enc }}{{ end }}
`;

/** Binds the replay role in each namespace the values allow replay into, and nowhere else. */
const REPLAY_BINDINGS = `{{- range .Values.krply.replay.namespaces }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {{ $.Values.uuid }}-replay
  namespace: {{ . }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: {{ $.Values.uuid }}-replay
subjects:
  - kind: ServiceAccount
    name: {{ $.Values.uuid }}
    namespace: {{ $.Release.Namespace }}
{{- end }}
`;

/**
 * Applies krply's finalize step to Pepr's generated chart: the safe webhook, the guard on the release
 * namespace, the Store binding to the account the pods really run as, the CRDs, the journal volume,
 * the sidecar and its Service, the digest key and the replay bindings.
 */
export function finalizeChart(
  chart: ChartFiles,
  webhook: WebhookBase,
  crds: string[],
  replayRole: Record<string, unknown>,
): ChartFiles {
  if (!chart.templates.has("namespace.yaml")) {
    throw new Error(
      "the chart is already finalized; run `pepr build` first (npm run build does both)",
    );
  }
  const t = new Map(chart.templates);
  t.delete("namespace.yaml");
  t.set("namespace-guard.yaml", GUARD);

  const hookBase = {
    ...webhook,
    serviceName: "@@{{ .Values.uuid }}@@",
    namespace: "@@{{ .Release.Namespace }}@@",
    timeoutSeconds: "@@{{ .Values.admission.webhookTimeout }}@@" as unknown as number,
  };
  const [labelled, plans] = validatingWebhooks({ ...hookBase, name: "@@{{ .Values.uuid }}@@" });
  const selector = labelled.namespaceSelector as { matchExpressions: { values: unknown }[] };
  selector.matchExpressions[0].values = helm(
    'concat (list "kube-system" .Release.Namespace) .Values.additionalIgnoredNamespaces | toJson',
  );
  t.set(
    "validation-webhook.yaml",
    templateOf(
      [
        {
          apiVersion: "admissionregistration.k8s.io/v1",
          kind: "ValidatingWebhookConfiguration",
          metadata: { name: helm(".Values.uuid") },
          webhooks: [labelled, plans],
        },
      ],
      ".Values.admission.enabled",
    ).replace(/@@(\{\{.*?\}\})@@/g, "$1"),
  );

  const binding = t.get("store-role-binding.yaml");
  if (!binding?.includes("name: pepr-krply-store\n    namespace")) {
    throw new Error(
      "store-role-binding.yaml is not what finalize expects (a subject pepr-krply-store)",
    );
  }
  t.set(
    "store-role-binding.yaml",
    binding.replace(
      "name: pepr-krply-store\n    namespace",
      "name: {{ .Values.uuid }}\n    namespace",
    ),
  );

  crds.forEach((crd, i) => t.set(`crd-${i}.yaml`, crd));
  t.set("journal-pvc.yaml", templateOf([journalClaim(chartSettings)], ".Values.watcher.enabled"));
  t.set("api-service.yaml", templateOf([apiService(chartSettings)], ".Values.watcher.enabled"));
  t.set("digest-key-secret.yaml", DIGEST_SECRET);
  t.set("replay-rbac.yaml", templateOf([replayRole]) + REPLAY_BINDINGS);
  t.set("watcher-deployment.yaml", withSidecar(t.get("watcher-deployment.yaml") ?? ""));
  t.set("krply-service-monitor.yaml", serviceMonitorTemplate());

  const mod = withModuleValue(t.get("module-secret.yaml") ?? "");
  t.set("module-secret.yaml", mod.template);
  const watcher = { ...(chart.values.watcher as Record<string, unknown>), ...watcherProbes() };
  return {
    templates: t,
    values: {
      ...chart.values,
      module: { key: mod.key, data: mod.data },
      watcher,
      krply: KRPLY_VALUES,
    },
    schema: describeValues(withOpenMaps(inlineRefs(withKrplySchema(chart.schema)))),
  };
}

function indent(text: string, spaces: number): string {
  const pad = " ".repeat(spaces);
  return text
    .trimEnd()
    .split("\n")
    .map(line => pad + line)
    .join("\n");
}

/** Inserts the sidecar, the journal mounts and the volumes into Pepr's watcher Deployment template. */
export function withSidecar(text: string): string {
  const anchors = [
    "      containers:\n",
    "          env:\n",
    "          volumeMounts:\n",
    "      volumes:\n",
    "          ports:\n",
  ];
  for (const anchor of anchors) {
    if (!text.includes(anchor)) {
      throw new Error(
        `watcher-deployment.yaml has no ${JSON.stringify(anchor.trim())}; Pepr's template changed`,
      );
    }
  }
  const add = watcherAdditions();
  const sidecar = templateOf([{ containers: [sidecarContainer(chartSettings)] }])
    .replace(/^containers:\n/, "")
    .replace(/@@(\{\{.*?\}\})@@/g, "$1");
  const volumes = stringify(krplyVolumes({ ...chartSettings, name: "@@NAME@@" })).replace(
    /@@NAME@@/g,
    "{{ .Values.uuid }}",
  );
  // The watcher's own sections first: the sidecar, inserted after, has sections of the same names.
  return text
    .replace("          env:\n", `          env:\n${indent(stringify(add.env), 12)}\n`)
    .replace(
      "          volumeMounts:\n",
      `          volumeMounts:\n${indent(stringify(add.mounts), 12)}\n`,
    )
    .replace("          ports:\n", `          ports:\n${indent(stringify(add.ports), 12)}\n`)
    .replace("      volumes:\n", `      volumes:\n${indent(volumes, 8)}\n`)
    .replace("      containers:\n", `      containers:\n${indent(sidecar, 6)}\n`);
}
