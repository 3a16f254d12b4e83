import { resourceOfCrd } from "./selection";

const crd = (status: unknown) => ({
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "widgets.example.com" },
  spec: {
    group: "example.com",
    scope: "Namespaced",
    names: { plural: "widgets", singular: "widget", kind: "Widget" },
    versions: [{ name: "v1", served: true, storage: true }],
  },
  status,
});

describe("resourceOfCrd", () => {
  it("accepts a just-created CRD whose conditions are still null, as not yet established", () => {
    const r = resourceOfCrd(crd({ conditions: null }));
    expect(r.established).toBe(false);
    expect(r.resource).toMatchObject({ group: "example.com", version: "v1", kind: "Widget" });
  });

  it("streams the version discovery prefers, not the storage version", () => {
    const c = crd(null);
    c.spec.versions = [
      { name: "v1beta1", served: true, storage: false },
      { name: "v1", served: true, storage: true },
      { name: "v2", served: true, storage: false },
      { name: "v3", served: false, storage: false },
    ];
    expect(resourceOfCrd(c).resource.version).toBe("v2");
  });

  it("reports an established CRD", () => {
    const r = resourceOfCrd(crd({ conditions: [{ type: "Established", status: "True" }] }));
    expect(r.established).toBe(true);
  });
});
