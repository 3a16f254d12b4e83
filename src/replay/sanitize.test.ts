import fc from "fast-check";
import { LAST_APPLIED, sanitize } from "./sanitize";

const deployment = {
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: {
    name: "web",
    namespace: "shop",
    uid: "u-1",
    resourceVersion: "42",
    generation: 3,
    creationTimestamp: "2026-01-01T00:00:00Z",
    deletionTimestamp: "2026-01-02T00:00:00Z",
    managedFields: [{ manager: "kubectl" }],
    ownerReferences: [{ apiVersion: "v1", kind: "X", name: "o", uid: "u-0", controller: false }],
    finalizers: ["example.com/keep"],
    labels: { app: "web" },
    annotations: { [LAST_APPLIED]: "{}", note: "keep" },
  },
  spec: {
    replicas: 2,
    selector: { matchLabels: { app: "web" } },
    template: {
      metadata: { creationTimestamp: null, labels: { app: "web" } },
      spec: {
        containers: [{ name: "app", image: "app:1", resources: {}, args: [] }],
        volumes: [{ name: "scratch", emptyDir: {} }],
      },
    },
  },
  status: { replicas: 2 },
};

describe("sanitize", () => {
  it("removes exactly the listed server fields, owner references, finalizers and last-applied", () => {
    const s = sanitize(deployment) as typeof deployment;
    expect(Object.keys(s.metadata).sort()).toEqual(["annotations", "labels", "name", "namespace"]);
    expect(s.metadata.annotations).toEqual({ note: "keep" });
    expect(s).not.toHaveProperty("status");
    expect(s.spec.template.metadata).toEqual({ labels: { app: "web" } });
  });

  it("keeps empty maps and lists that carry meaning", () => {
    const s = sanitize(deployment) as typeof deployment;
    // emptyDir: {} is a volume type; resources: {} and args: [] are what the user wrote.
    expect(s.spec.template.spec.volumes[0]).toEqual({ name: "scratch", emptyDir: {} });
    expect(s.spec.template.spec.containers[0]).toEqual({
      name: "app",
      image: "app:1",
      resources: {},
      args: [],
    });
    const cm = sanitize({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "c", labels: {}, annotations: {} },
      data: {},
    });
    expect(cm).toEqual({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "c", labels: {}, annotations: {} },
      data: {},
    });
  });

  it("keeps owner references (without the source UID) and finalizers when allowed", () => {
    const s = sanitize(deployment, {
      allowOwnerRefs: true,
      allowFinalizers: true,
    }) as typeof deployment;
    expect(s.metadata.ownerReferences).toEqual([
      { apiVersion: "v1", kind: "X", name: "o", controller: false },
    ]);
    expect(s.metadata.finalizers).toEqual(["example.com/keep"]);
  });

  it("removes a Service's allocated addresses and node ports, and nothing else of it", () => {
    const svc = {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "s" },
      spec: {
        type: "NodePort",
        clusterIP: "10.0.0.1",
        clusterIPs: ["10.0.0.1"],
        ipFamilies: ["IPv4"],
        ports: [{ name: "http", port: 80, targetPort: 8080, nodePort: 30080 }],
        selector: {},
      },
    };
    expect(sanitize(svc)).toEqual({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "s" },
      spec: {
        type: "NodePort",
        ipFamilies: ["IPv4"],
        ports: [{ name: "http", port: 80, targetPort: 8080 }],
        selector: {},
      },
    });
  });

  it("removes the null timestamp of a CronJob's nested pod template", () => {
    const cj = {
      apiVersion: "batch/v1",
      kind: "CronJob",
      metadata: { name: "c" },
      spec: {
        jobTemplate: {
          metadata: { creationTimestamp: null },
          spec: { template: { metadata: { creationTimestamp: null }, spec: {} } },
        },
      },
    };
    const s = sanitize(cj) as typeof cj;
    expect(s.spec.jobTemplate.spec.template.metadata).toEqual({});
    // Only pod templates: the job template's own metadata is not a `template` key.
    expect(s.spec.jobTemplate.metadata).toEqual({ creationTimestamp: null });
  });

  it("does not change its input", () => {
    const copy = structuredClone(deployment);
    sanitize(deployment);
    expect(deployment).toEqual(copy);
  });

  it("is idempotent: sanitizing twice equals sanitizing once (property)", () => {
    const meta = fc.record(
      {
        name: fc.string(),
        uid: fc.uuid(),
        resourceVersion: fc.string(),
        generation: fc.nat(),
        creationTimestamp: fc.option(fc.string()),
        managedFields: fc.array(fc.object()),
        finalizers: fc.array(fc.string()),
        ownerReferences: fc.array(
          fc.record({ kind: fc.string(), name: fc.string(), uid: fc.uuid() }),
        ),
        annotations: fc.dictionary(fc.oneof(fc.constant(LAST_APPLIED), fc.string()), fc.string()),
        labels: fc.dictionary(fc.string(), fc.string()),
      },
      { requiredKeys: ["name"] },
    );
    const obj = fc.record(
      {
        apiVersion: fc.constantFrom("v1", "apps/v1", "batch/v1", "example.com/v1"),
        kind: fc.constantFrom("Service", "Deployment", "ConfigMap", "CronJob", "Widget"),
        metadata: meta,
        spec: fc.oneof(
          fc.object(),
          fc.record({
            clusterIP: fc.string(),
            ports: fc.array(fc.record({ port: fc.nat(), nodePort: fc.nat() })),
            template: fc.record({ metadata: fc.record({ creationTimestamp: fc.constant(null) }) }),
          }),
        ),
        status: fc.object(),
        data: fc.object(),
      },
      { requiredKeys: ["apiVersion", "kind", "metadata"] },
    );
    const opts = fc.record({ allowOwnerRefs: fc.boolean(), allowFinalizers: fc.boolean() });
    fc.assert(
      fc.property(obj, opts, (o, flags) => {
        const once = sanitize(o as Record<string, unknown>, flags);
        expect(sanitize(once, flags)).toEqual(once);
      }),
      { numRuns: 300 },
    );
  });
});
