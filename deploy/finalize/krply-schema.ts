/** Extends Pepr's values schema (which rejects unknown keys) with the `krply` section. */
export function withKrplySchema(schema: Record<string, unknown>): Record<string, unknown> {
  const str = (description: string) => ({ type: "string", description });
  const krply = {
    type: "object",
    additionalProperties: false,
    description:
      "krply's own settings (the journal volume, the query sidecar, replay, the digest key)",
    properties: {
      journal: {
        type: "object",
        additionalProperties: false,
        description: "The journal's PersistentVolumeClaim (kept across uninstalls)",
        properties: {
          size: str(
            "Size of the journal's PersistentVolumeClaim; the journal's byte budget is 80% of it",
          ),
          storageClassName: str(
            "Storage class of the journal's claim; empty uses the cluster default",
          ),
        },
      },
      api: {
        type: "object",
        additionalProperties: false,
        description: "The query sidecar in the watcher pod, behind the <uuid>-api Service on 8080",
        properties: {
          auth: {
            type: "string",
            enum: ["kubernetes"],
            description:
              "How the query sidecar authenticates callers (TokenReview and SubjectAccessReview); `none` is refused off loopback",
          },
          resources: {
            type: "object",
            description: "Requests and limits of the query sidecar container",
          },
        },
      },
      replay: {
        type: "object",
        additionalProperties: false,
        description: "Where replay may write",
        properties: {
          namespaces: {
            type: "array",
            items: { type: "string" },
            description:
              "Namespaces replay may create and patch in; the replay role is bound only there",
          },
        },
      },
      serviceMonitor: {
        type: "object",
        additionalProperties: false,
        description:
          "A ServiceMonitor (monitoring.coreos.com/v1) for krply's metrics: the sidecar's /metrics and the recorder's (port 9464)",
        properties: {
          enabled: {
            type: "boolean",
            description: "Render it; the cluster needs the Prometheus Operator's CRDs",
          },
          interval: str("Scrape interval of both endpoints"),
          labels: {
            type: "object",
            additionalProperties: { type: "string" },
            description: "Labels of the ServiceMonitor; Prometheus selects ServiceMonitors on them",
          },
        },
      },
    },
  };
  // Pepr's schema is a $ref to definitions.Values, whose additionalProperties is false.
  const ref = typeof schema.$ref === "string" ? schema.$ref.split("/").pop() : undefined;
  const definitions = (schema.definitions ?? {}) as Record<string, Record<string, unknown>>;
  const target = ref ? definitions[ref] : schema;
  if (!target)
    throw new Error(`values.schema.json names ${String(schema.$ref)}, which it does not define`);
  const module = {
    type: "object",
    additionalProperties: false,
    description:
      "The module bundle (set by the build; a value so Helm's release record stays small)",
    properties: {
      key: str("File name of the gzipped bundle in the module Secret"),
      data: str("The gzipped bundle, base64"),
    },
  };
  const extended = {
    ...target,
    properties: { ...((target.properties ?? {}) as Record<string, unknown>), krply, module },
  };
  return ref ? { ...schema, definitions: { ...definitions, [ref]: extended } } : extended;
}
