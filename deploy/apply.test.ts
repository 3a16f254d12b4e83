import { manifestsOf, pathOf } from "./apply";

const doc = (kind: string, apiVersion: string, name: string, namespace?: string) =>
  `apiVersion: ${apiVersion}\nkind: ${kind}\nmetadata:\n  name: ${name}\n${namespace ? `  namespace: ${namespace}\n` : ""}`;

describe("npm run deploy's manifests", () => {
  it("applies the namespace and CRDs first and the webhooks last, keeping the rest in order", () => {
    const text = [
      doc("ValidatingWebhookConfiguration", "admissionregistration.k8s.io/v1", "hook"),
      doc("Deployment", "apps/v1", "watcher", "pepr-system"),
      doc("CustomResourceDefinition", "apiextensions.k8s.io/v1", "replayplans.krply.dev"),
      doc("Service", "v1", "api", "pepr-system"),
      doc("Namespace", "v1", "pepr-system"),
    ].join("---\n");
    expect(manifestsOf(text).map(m => m.kind)).toEqual([
      "Namespace",
      "CustomResourceDefinition",
      "Deployment",
      "Service",
      "ValidatingWebhookConfiguration",
    ]);
  });

  it("keeps every field of an object, not only the ones it checks", () => {
    const [cm] = manifestsOf(`${doc("Secret", "v1", "k", "pepr-system")}data:\n  key: YQ==\n`);
    expect((cm as Record<string, unknown>).data).toEqual({ key: "YQ==" });
  });

  it("refuses a kind it has no path for, and a document that is no object", () => {
    expect(() => manifestsOf(doc("Pod", "v1", "p", "default"))).toThrow(/Pod/);
    expect(() => manifestsOf("just: text\n")).toThrow(/not a Kubernetes object/);
  });

  it("builds core, grouped, namespaced and cluster-wide paths (roles before Services)", () => {
    const [role, svc] = manifestsOf(
      [
        doc("Service", "v1", "api", "pepr-system"),
        doc("ClusterRole", "rbac.authorization.k8s.io/v1", "pepr-krply"),
      ].join("---\n"),
    );
    expect(pathOf(svc)).toBe("/api/v1/namespaces/pepr-system/services/api");
    expect(pathOf(role)).toBe("/apis/rbac.authorization.k8s.io/v1/clusterroles/pepr-krply");
  });
});
