import fc from "fast-check";
import { dependencies, orderObjects, rankOf, type Orderable } from "./order";

const ns = (name: string): Orderable => ({
  group: "",
  kind: "Namespace",
  namespace: "",
  name,
  manifest: { kind: "Namespace" },
});

describe("orderObjects", () => {
  it("puts namespaces, CRDs, their resources, configuration and workloads in that order", () => {
    const objs: Orderable[] = [
      { group: "apps", kind: "Deployment", namespace: "a", name: "web", manifest: {} },
      { group: "", kind: "ConfigMap", namespace: "a", name: "cfg", manifest: {} },
      { group: "example.com", kind: "Widget", namespace: "a", name: "w", manifest: {} },
      {
        group: "apiextensions.k8s.io",
        kind: "CustomResourceDefinition",
        namespace: "",
        name: "widgets.example.com",
        manifest: { spec: { group: "example.com", names: { kind: "Widget" } } },
      },
      ns("a"),
    ];
    expect(orderObjects(objs).map(o => o.kind)).toEqual([
      "Namespace",
      "CustomResourceDefinition",
      "Widget",
      "ConfigMap",
      "Deployment",
    ]);
  });

  it("is a valid topological order of the dependencies (property)", () => {
    const names = fc.constantFrom("a", "b", "c");
    const podTemplate = fc.record({
      serviceAccountName: names,
      volumes: fc.array(fc.record({ name: names, configMap: fc.record({ name: names }) })),
      containers: fc.array(
        fc.record({
          name: names,
          envFrom: fc.array(fc.record({ configMapRef: fc.record({ name: names }) })),
        }),
      ),
    });
    const obj: fc.Arbitrary<Orderable> = fc.oneof(
      names.map(n => ns(n)),
      fc.record({
        group: fc.constant(""),
        kind: fc.constantFrom("ConfigMap", "ServiceAccount", "Service", "PersistentVolumeClaim"),
        namespace: names,
        name: names,
        manifest: fc.constant({}),
      }),
      fc.record({
        group: fc.constantFrom("apps", "example.com", "other.io"),
        kind: fc.constantFrom("Deployment", "Widget", "Rollout"),
        namespace: names,
        name: names,
        manifest: podTemplate.map(spec => ({ spec: { template: { spec } } })),
      }),
      fc.record({
        group: fc.constant("apiextensions.k8s.io"),
        kind: fc.constant("CustomResourceDefinition"),
        namespace: fc.constant(""),
        name: names,
        manifest: fc
          .record({
            group: fc.constantFrom("example.com", "other.io"),
            kind: fc.constantFrom("Widget", "Rollout"),
          })
          .map(g => ({ spec: { group: g.group, names: { kind: g.kind } } })),
      }),
    );
    fc.assert(
      fc.property(
        fc.uniqueArray(obj, {
          selector: o => `${o.group}/${o.kind}/${o.namespace}/${o.name}`,
          maxLength: 25,
        }),
        objs => {
          const order = orderObjects(objs);
          expect(order).toHaveLength(objs.length);
          const pos = new Map(order.map((o, i) => [o, i]));
          for (const [a, b] of dependencies(objs)) expect(pos.get(a)!).toBeLessThan(pos.get(b)!);
          // Namespaces always lead.
          const firstOther = order.findIndex(o => rankOf(o) > 0);
          if (firstOther >= 0) expect(order.slice(firstOther).every(o => rankOf(o) > 0)).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });
});
