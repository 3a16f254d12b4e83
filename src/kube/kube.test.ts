import { KubeConfig } from "@kubernetes/client-node";
import { clusterIdOf } from "../watch/cluster-identity";
import { planStreams, resourceOfCrd } from "../watch/selection";
import {
  collectionPath,
  compareKubeAwareVersions,
  DefaultResources,
  findResource,
  parseResourceList,
  preferredGroupVersions,
  preferredVersionOf,
  resolveResource,
} from "./discovery";
import { ApiError, apiErrorFrom, apiErrorFromStatus, parseRetryAfter } from "./errors";
import { withQuery } from "./client";

const core = parseResourceList({
  groupVersion: "v1",
  resources: [
    {
      name: "configmaps",
      singularName: "configmap",
      namespaced: true,
      kind: "ConfigMap",
      verbs: ["list", "watch"],
      shortNames: ["cm"],
    },
    {
      name: "pods",
      singularName: "pod",
      namespaced: true,
      kind: "Pod",
      verbs: ["list", "watch"],
      shortNames: ["po"],
    },
    { name: "pods/log", singularName: "", namespaced: true, kind: "Pod", verbs: ["get"] },
    {
      name: "namespaces",
      singularName: "namespace",
      namespaced: false,
      kind: "Namespace",
      verbs: ["list", "watch"],
      shortNames: ["ns"],
    },
    {
      name: "events",
      singularName: "event",
      namespaced: true,
      kind: "Event",
      verbs: ["list", "watch"],
      shortNames: ["ev"],
    },
    {
      name: "bindings",
      singularName: "binding",
      namespaced: true,
      kind: "Binding",
      verbs: ["create"],
    },
  ],
});
const apps = parseResourceList({
  groupVersion: "apps/v1",
  resources: [
    {
      name: "deployments",
      singularName: "deployment",
      namespaced: true,
      kind: "Deployment",
      verbs: ["list", "watch"],
      shortNames: ["deploy"],
    },
    {
      name: "statefulsets",
      singularName: "statefulset",
      namespaced: true,
      kind: "StatefulSet",
      verbs: ["list", "watch"],
      shortNames: ["sts"],
    },
  ],
});
const events = parseResourceList({
  groupVersion: "events.k8s.io/v1",
  resources: [
    {
      name: "events",
      singularName: "event",
      namespaced: true,
      kind: "Event",
      verbs: ["list", "watch"],
    },
  ],
});
const all = [...core, ...apps, ...events];

describe("discovery", () => {
  it("drops subresources and fills group, version, kind, plural and scope", () => {
    expect(core.map(r => r.plural)).not.toContain("pods/log");
    expect(apps[0]).toMatchObject({
      group: "apps",
      version: "v1",
      kind: "Deployment",
      namespaced: true,
    });
  });

  it("resolves aliases, short names, singular, kind and qualified names; the core group wins", () => {
    const name = (a: string) => {
      const r = resolveResource(a, all);
      return `${r.group}/${r.version}/${r.plural}`;
    };
    expect(name("deploy")).toBe("apps/v1/deployments");
    expect(name("sts")).toBe("apps/v1/statefulsets");
    expect(name("cm")).toBe("/v1/configmaps");
    expect(name("Pod")).toBe("/v1/pods");
    expect(name("namespace")).toBe("/v1/namespaces");
    expect(name("events")).toBe("/v1/events");
    expect(name("events.events.k8s.io")).toBe("events.k8s.io/v1/events");
    expect(name("deployments.v1.apps")).toBe("apps/v1/deployments");
    expect(findResource("rc", all)).toBeUndefined();
    expect(() => resolveResource("widgets", all)).toThrow(
      /does not serve a resource named "widgets"/,
    );
  });

  it("picks one preferred version per group and builds collection paths", () => {
    expect(
      preferredGroupVersions({
        groups: [
          {
            name: "apps",
            versions: [{ groupVersion: "apps/v1", version: "v1" }],
            preferredVersion: { groupVersion: "apps/v1", version: "v1" },
          },
          {
            name: "x.io",
            versions: [
              { groupVersion: "x.io/v2", version: "v2" },
              { groupVersion: "x.io/v1", version: "v1" },
            ],
          },
        ],
      }),
    ).toEqual(["apps/v1", "x.io/v2"]);
    expect(collectionPath(apps[0], "team-a")).toBe("/apis/apps/v1/namespaces/team-a/deployments");
    expect(collectionPath(core[2], "ignored")).toBe("/api/v1/namespaces");
    expect(withQuery("/x", { a: 1, b: undefined, c: "d e" })).toBe("/x?a=1&c=d+e");
  });

  it("lists the default resources", () => {
    expect(DefaultResources).toEqual([
      "namespaces",
      "configmaps",
      "services",
      "deployments",
      "statefulsets",
      "daemonsets",
      "runtimeclasses",
      "pods",
    ]);
  });
});

describe("typed API errors", () => {
  it("carries status, reason and details from a Status body", () => {
    const e = apiErrorFrom(
      404,
      JSON.stringify({
        kind: "Status",
        reason: "NotFound",
        message: "cm x not found",
        details: { name: "x" },
      }),
      "GET /x",
    );
    expect(e).toBeInstanceOf(ApiError);
    expect([e.status, e.reason, e.details]).toEqual([404, "NotFound", { name: "x" }]);
    expect(apiErrorFrom(502, "<html>bad gateway</html>", "GET /x").reason).toBe("Unknown");
    expect(
      apiErrorFromStatus({ code: 410, reason: "Expired", message: "too old" }, "watch").status,
    ).toBe(410);
  });

  it("parses Retry-After as seconds or an HTTP date", () => {
    expect(parseRetryAfter("3")).toBe(3000);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 4_000)).toBe(6_000);
    expect(parseRetryAfter("soon")).toBeUndefined();
    expect(parseRetryAfter(undefined)).toBeUndefined();
  });
});

describe("selection and cluster identity", () => {
  it("plans one stream per namespace for namespaced resources and one for cluster-scoped ones", () => {
    // Parsing these from KRPLY_RESOURCES and KRPLY_NAMESPACES is tested in src/config.test.ts.
    const sel = {
      resources: ["cm", "ns", "widgets.example.com"],
      namespaces: ["a", "b"],
      selector: "",
    };
    const { specs, unresolved } = planStreams(sel, all, "c1");
    expect(specs.map(s => s.path)).toEqual([
      "/api/v1/namespaces/a/configmaps",
      "/api/v1/namespaces/b/configmaps",
      "/api/v1/namespaces",
    ]);
    expect(unresolved).toEqual(["widgets.example.com"]);
  });

  it("reads a CRD's served storage version and whether it is established", () => {
    const crd = {
      metadata: { name: "widgets.example.com" },
      spec: {
        group: "example.com",
        scope: "Namespaced",
        names: { plural: "widgets", kind: "Widget" },
        versions: [
          { name: "v1beta1", served: true, storage: false },
          { name: "v1", served: true, storage: true },
        ],
      },
      status: { conditions: [{ type: "Established", status: "True" }] },
    };
    const { resource, established } = resourceOfCrd(crd);
    expect(resource).toMatchObject({
      group: "example.com",
      version: "v1",
      plural: "widgets",
      namespaced: true,
    });
    expect(established).toBe(true);
  });

  it("names a cluster by server host and kube-system UID", () => {
    expect(clusterIdOf("https://10.0.0.1:6443", "abc")).toBe("10.0.0.1:6443~abc");
    expect(() => clusterIdOf("not a url", "abc")).toThrow(/not a URL/);
  });

  it("loads contexts from a kubeconfig", () => {
    const kc = new KubeConfig();
    kc.loadFromString(
      "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: 'https://h:1'}\nusers:\n- name: u\n  user: {token: t}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n",
    );
    expect(kc.getCurrentCluster()?.server).toBe("https://h:1");
  });
});

describe("version priority", () => {
  it("orders versions as the API server does for a group's preferred version", () => {
    const sorted = [
      "v1alpha1",
      "foo",
      "v2beta1",
      "v1",
      "v10",
      "v2",
      "v1beta2",
      "v1beta1",
      "bar",
    ].sort(compareKubeAwareVersions);
    expect(sorted).toEqual([
      "v10",
      "v2",
      "v1",
      "v2beta1",
      "v1beta2",
      "v1beta1",
      "v1alpha1",
      "bar",
      "foo",
    ]);
    expect(preferredVersionOf(["v1", "v2beta1"])).toBe("v1");
    expect(preferredVersionOf([])).toBeUndefined();
  });
});
