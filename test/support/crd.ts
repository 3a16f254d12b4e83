// A namespaced CustomResourceDefinition with one served version, as the tests and the demo install
// them: the demo's Coupon, the Pepr Store the recorder mirrors into.

/** The kind's names; the CRD is named `<plural>.<group>`. */
export interface CrdNames {
  plural: string;
  singular: string;
  kind: string;
  listKind?: string;
}

/** What crdOf returns: the fields callers read back, and the body to create or apply. */
export interface Crd {
  apiVersion: "apiextensions.k8s.io/v1";
  kind: "CustomResourceDefinition";
  metadata: { name: string };
  spec: { group: string; scope: "Namespaced"; names: CrdNames; versions: object[] };
}

/**
 * A namespaced CRD of `group` whose one version (v1, served and stored) has these top-level
 * properties in its schema.
 */
export function crdOf(group: string, names: CrdNames, properties: Record<string, object>): Crd {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${names.plural}.${group}` },
    spec: {
      group,
      scope: "Namespaced",
      names,
      versions: [
        {
          name: "v1",
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: "object", properties } },
        },
      ],
    },
  };
}
