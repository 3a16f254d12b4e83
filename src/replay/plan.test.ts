import type { MaterializedObject, StreamCoverage } from "../materialize";
import { buildPlan, PlanRefused, type PlanInput } from "./plan";
import { policyOf } from "./policy";
import { planDigest } from "./digest";

const C = "src~uid-src";
const sid = (resource: string, ns: string, group = "", version = "v1") =>
  `${C}/${group || "-"}/${version}/${resource}/${ns || "-"}/-`;

function mo(
  kind: string,
  namespace: string,
  name: string,
  object: Record<string, unknown>,
  resource: string,
  group = "",
): MaterializedObject {
  const version = group ? "v1" : "v1";
  return {
    kind,
    group,
    namespace,
    name,
    object: {
      apiVersion: group ? `${group}/${version}` : version,
      kind,
      ...object,
      metadata: {
        name,
        ...(namespace ? { namespace } : {}),
        uid: `uid-${kind}-${name}`,
        resourceVersion: "7",
        ...((object.metadata as object) ?? {}),
      },
    },
    provenance: {
      streamId: sid(resource, namespace, group),
      eventId: "e",
      ingestSeq: 1,
      recordType: "event",
      watchType: "ADDED",
      synthetic: false,
      resourceVersion: "7",
      observedAt: "2026-01-01T00:00:00Z",
      source: null,
    },
  };
}

const cov = (streamId: string, reasons: string[] = []): StreamCoverage => ({
  streamId,
  watermark: "7",
  watermarkObservedAt: null,
  baselinePresent: true,
  unresolvedGap: reasons.length > 0,
  available: true,
  complete: reasons.length === 0,
  reasons,
});

const objects = [
  mo(
    "Namespace",
    "",
    "shop",
    {
      metadata: { labels: { "kubernetes.io/metadata.name": "shop" } },
      spec: { finalizers: ["kubernetes"] },
    },
    "namespaces",
  ),
  mo("ConfigMap", "shop", "cfg", { data: { a: "1" } }, "configmaps"),
  mo("ConfigMap", "shop", "kube-root-ca.crt", { data: {} }, "configmaps"),
  mo("Secret", "shop", "pw", { data: { p: "<redacted>" } }, "secrets"),
  mo("Service", "shop", "lb", { spec: { type: "LoadBalancer" } }, "services"),
  mo(
    "Service",
    "shop",
    "web",
    { spec: { clusterIP: "10.0.0.3", ports: [{ port: 80 }] } },
    "services",
  ),
  mo("Pod", "shop", "web-1", { spec: {} }, "pods"),
  mo(
    "ReplicaSet",
    "shop",
    "web-abc",
    {
      metadata: {
        ownerReferences: [
          { kind: "Deployment", name: "web", uid: "uid-Deployment-web", controller: true },
        ],
      },
    },
    "replicasets",
    "apps",
  ),
  mo(
    "Deployment",
    "shop",
    "web",
    {
      spec: {
        template: {
          metadata: { creationTimestamp: null },
          spec: { volumes: [{ name: "c", configMap: { name: "cfg" } }] },
        },
      },
    },
    "deployments",
    "apps",
  ),
  mo("ConfigMap", "other", "elsewhere", { data: {} }, "configmaps"),
];

const streams = [
  cov(sid("namespaces", "")),
  cov(sid("configmaps", "shop")),
  cov(sid("secrets", "shop")),
  cov(sid("services", "shop")),
  cov(sid("pods", "shop")),
  cov(sid("replicasets", "shop", "apps")),
  cov(sid("deployments", "shop", "apps")),
  cov(sid("configmaps", "other"), ["gap"]),
];

const input = (over: Partial<PlanInput> = {}): PlanInput => ({
  id: "rp-test",
  createdAt: "2026-01-02T00:00:00Z",
  sourceClusterId: C,
  at: "2026-01-01T12:00:00.000Z",
  snapshotId: null,
  sourceNamespaces: ["shop"],
  target: { clusterId: "dst~uid-dst", isSource: false },
  policy: policyOf({ namespaceMap: { shop: "shop-restore" } }),
  objects,
  streams,
  prunedBefore: null,
  warnings: [],
  ...over,
});

describe("buildPlan", () => {
  it("keeps what may be replayed, in dependency order, mapped and labelled", () => {
    const plan = buildPlan(input());
    expect(plan.objects.map(o => `${o.ref.kind}/${o.ref.namespace}/${o.ref.name}`)).toEqual([
      "Namespace//shop-restore",
      "ConfigMap/shop-restore/cfg",
      "Service/shop-restore/web",
      "Deployment/shop-restore/web",
    ]);
    for (const o of plan.objects) {
      const md = o.manifest.metadata as Record<string, unknown>;
      expect((md.labels as Record<string, string>)["krply.dev/plan"]).toBe("rp-test");
      expect(JSON.stringify(o.manifest)).not.toContain("uid-");
    }
    expect(plan.fieldManager).toBe("krply-plan-rp-test");
    expect(plan.targetNamespaces).toEqual(["shop-restore"]);
    const ns = plan.objects[0].manifest as { metadata: { labels: Record<string, string> } };
    expect(ns.metadata.labels["kubernetes.io/metadata.name"]).toBe("shop-restore");
    expect((plan.objects[2].manifest.spec as Record<string, unknown>).clusterIP).toBeUndefined();
    // The other namespace's gap does not concern this plan.
    expect(plan.coverageComplete).toBe(true);
  });

  it("lists each excluded object with its reason, and says Secrets are never replayable", () => {
    const plan = buildPlan(
      input({
        policy: policyOf({ includeSecrets: true }),
        target: { clusterId: "d", isSource: false },
      }),
    );
    const why = Object.fromEntries(plan.excluded.map(e => [`${e.kind}/${e.name}`, e.reason]));
    expect(Object.keys(why).sort()).toEqual([
      "ConfigMap/kube-root-ca.crt",
      "Pod/web-1",
      "ReplicaSet/web-abc",
      "Secret/pw",
      "Service/lb",
    ]);
    expect(why["Secret/pw"]).toMatch(/redacted.*never replayable/);
    expect(why["ReplicaSet/web-abc"]).toContain("Deployment/web");
    expect(plan.warnings.join("\n")).toMatch(/includeSecrets.*never replayed/);
  });

  it("refuses incomplete coverage unless allowGaps, then warns on each affected object", () => {
    const gappy = streams.map(s =>
      s.streamId === sid("configmaps", "shop") ? cov(s.streamId, ["a gap"]) : s,
    );
    expect(() => buildPlan(input({ streams: gappy }))).toThrow(PlanRefused);
    expect(() => buildPlan(input({ prunedBefore: "2026-01-01T13:00:00Z" }))).toThrow(/pruned/);
    const plan = buildPlan(input({ streams: gappy, policy: policyOf({ allowGaps: true }) }));
    expect(plan.coverageComplete).toBe(false);
    const cfg = plan.objects.find(o => o.ref.name === "cfg")!;
    expect(cfg.warnings.join()).toContain("a gap");
    expect(plan.objects.find(o => o.ref.kind === "Deployment")!.warnings).toEqual([]);
  });

  it("never targets the source cluster unless the plan names it", () => {
    expect(() => buildPlan(input({ target: { clusterId: C, isSource: false } }))).toThrow(
      /source cluster/,
    );
    const plan = buildPlan(input({ target: { clusterId: C, isSource: true } }));
    expect(plan.target.isSource).toBe(true);
  });

  it("renames on request and says references are not rewritten", () => {
    const plan = buildPlan(
      input({ policy: policyOf({ nameMap: { "ConfigMap/shop/cfg": "cfg2" } }) }),
    );
    const cfg = plan.objects.find(o => o.source.name === "cfg")!;
    expect(cfg.ref.name).toBe("cfg2");
    expect(cfg.warnings.join()).toContain("not rewritten");
  });

  it("excludes an object that would carry a source UID anywhere", () => {
    const leaky = mo(
      "ConfigMap",
      "shop",
      "leak",
      { data: { owner: "uid-Deployment-web" } },
      "configmaps",
    );
    const plan = buildPlan(input({ objects: [...objects, leaky] }));
    expect(plan.excluded.find(e => e.name === "leak")!.reason).toMatch(
      /source UID at \.data\.owner/,
    );
    const uuid = "0b5c3f7e-1d2a-4e8b-9c6d-7a8b9c0d1e2f";
    const owner = mo(
      "ConfigMap",
      "shop",
      "owner",
      { metadata: { uid: uuid }, data: {} },
      "configmaps",
    );
    const quoting = mo(
      "ConfigMap",
      "shop",
      "quote",
      { data: { note: `made for ${uuid} earlier` } },
      "configmaps",
    );
    const both = buildPlan(input({ objects: [...objects, owner, quoting] }));
    expect(both.excluded.find(e => e.name === "quote")!.reason).toMatch(/\.data\.note/);
    expect(both.objects.some(o => o.ref.name === "owner")).toBe(true);
  });

  it("has a digest over its content", () => {
    const plan = buildPlan(input());
    const { digest, ...body } = plan;
    expect(planDigest(body)).toBe(digest);
    expect(planDigest({ ...body, warnings: ["x"] })).toBe(digest);
    expect(planDigest({ ...body, objects: body.objects.slice(1) })).not.toBe(digest);
  });
});
