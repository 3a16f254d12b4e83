/** The label every object of a replay plan carries (decision D5); the webhook selects on it. */
export const PLAN_LABEL = "krply.dev/plan";

/** What the generated webhook contributes that finalize keeps: its CA, its path and its Service. */
export interface WebhookBase {
  name: string;
  caBundle: string;
  path: string;
  serviceName: string;
  namespace: string;
  timeoutSeconds: number;
  ignoredNamespaces: string[];
}

type Json = Record<string, unknown>;

function common(base: WebhookBase): Json {
  return {
    admissionReviewVersions: ["v1", "v1beta1"],
    clientConfig: {
      caBundle: base.caBundle,
      service: { name: base.serviceName, namespace: base.namespace, path: base.path },
    },
    failurePolicy: "Fail",
    matchPolicy: "Equivalent",
    sideEffects: "None",
    timeoutSeconds: base.timeoutSeconds,
  };
}

const WRITES = ["CREATE", "UPDATE"];

/**
 * The replay gate's validating webhooks. The first sees every API group, but only objects that carry
 * the plan label, so an outage of krply's admission pods fails replay writes and nothing else. The
 * second sees ReplayPlans, whose approval the API server must attest; it blocks only ReplayPlan writes.
 */
export function validatingWebhooks(base: WebhookBase): Json[] {
  return [
    {
      ...common(base),
      name: `${base.name}.pepr.dev`,
      namespaceSelector: {
        matchExpressions: [
          {
            key: "kubernetes.io/metadata.name",
            operator: "NotIn",
            values: ["kube-system", base.namespace, ...base.ignoredNamespaces],
          },
        ],
      },
      objectSelector: { matchExpressions: [{ key: PLAN_LABEL, operator: "Exists" }] },
      rules: [
        {
          apiGroups: ["*"],
          apiVersions: ["*"],
          operations: [...WRITES],
          resources: ["*"],
          scope: "*",
        },
      ],
    },
    replayPlanWebhook(base, `${base.name}-replayplans.pepr.dev`),
  ];
}

/** The ReplayPlan webhook alone: the mutating configuration stamps approvals with it. */
export function replayPlanWebhook(base: WebhookBase, name: string): Json {
  return {
    ...common(base),
    name,
    rules: [
      {
        apiGroups: ["krply.dev"],
        apiVersions: ["v1alpha1"],
        operations: [...WRITES],
        resources: ["replayplans"],
        scope: "Cluster",
      },
    ],
  };
}

/** Reads the generated webhook's CA, path and Service from its configuration object. */
export function webhookBaseOf(
  config: Json,
  timeoutSeconds: number,
  ignored: string[],
): WebhookBase {
  const hooks = config.webhooks as Json[] | undefined;
  const first = hooks?.[0];
  const client = first?.clientConfig as
    | { caBundle?: string; service?: { name?: string; namespace?: string; path?: string } }
    | undefined;
  const meta = config.metadata as { name?: string } | undefined;
  if (!first || !client?.caBundle || !client.service?.path || !client.service.name || !meta?.name) {
    throw new Error(
      `generated ${String(config.kind)} has no webhook with a CA, a Service and a path; ` +
        "the Pepr build output is not what finalize expects",
    );
  }
  return {
    name: meta.name,
    caBundle: client.caBundle,
    path: client.service.path,
    serviceName: client.service.name,
    namespace: client.service.namespace ?? "pepr-system",
    timeoutSeconds,
    ignoredNamespaces: ignored,
  };
}
