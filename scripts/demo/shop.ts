// The demo's scripted "shop": what it writes, as data, so the README examples, the demo and their tests
// all replay exactly the same history against a throwaway API server.

import { crdOf } from "../../test/support/crd";

/** The namespace every shop object lives in. */
export const SHOP_NAMESPACE = "shop";

/** The small custom resource the shop installs, so the journal shows a CRD-defined kind too. */
export const COUPON_CRD = crdOf(
  "shop.krply.dev",
  { plural: "coupons", singular: "coupon", kind: "Coupon", listKind: "CouponList" },
  {
    spec: {
      type: "object",
      properties: { code: { type: "string" }, percent: { type: "integer" } },
    },
  },
);

/** What the recorder watches in the shop: kubectl names, the coupon by its full resource name. */
export const SHOP_RESOURCES = ["deployments", "configmaps", "services", "coupons.shop.krply.dev"];

/** One write of the workload: a JSON merge patch, or a create (POST) of a whole object. */
export interface ShopStep {
  /** What the demo prints while it runs the step. */
  say: string;
  method: "POST" | "PATCH";
  path: string;
  body: object;
  /** The resource (SHOP_RESOURCES) whose stream must see this write. */
  resource: string;
}

const ns = SHOP_NAMESPACE;
const deployments = `/apis/apps/v1/namespaces/${ns}/deployments`;
const configmaps = `/api/v1/namespaces/${ns}/configmaps`;
const services = `/api/v1/namespaces/${ns}/services`;
const coupons = `/apis/shop.krply.dev/v1/namespaces/${ns}/coupons`;

function deployment(name: string, image: string, replicas: number): object {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace: ns, labels: { app: name } },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name, image }] },
      },
    },
  };
}

const create = (say: string, path: string, resource: string, body: object): ShopStep => ({
  say,
  method: "POST",
  path,
  body,
  resource,
});
const patch = (say: string, path: string, resource: string, body: object): ShopStep => ({
  say,
  method: "PATCH",
  path,
  body,
  resource,
});

const image = (name: string, value: string) => ({
  spec: { template: { spec: { containers: [{ name, image: value }] } } },
});

/** The shop opens and is changed while krply records. */
export const RECORDED_STEPS: readonly ShopStep[] = [
  create("create ConfigMap shop-settings", configmaps, "configmaps", {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "shop-settings", namespace: ns },
    data: { currency: "EUR", checkout: "enabled" },
  }),
  create("create Deployment web (nginx:1.27, 2 replicas)", deployments, "deployments", {
    ...deployment("web", "nginx:1.27", 2),
  }),
  create("create Deployment cart (shop/cart:1.0)", deployments, "deployments", {
    ...deployment("cart", "registry.example/shop/cart:1.0", 1),
  }),
  create("create Service web (tier=frontend)", services, "services", {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "web", namespace: ns, labels: { tier: "frontend" } },
    spec: { selector: { app: "web" }, ports: [{ port: 80, targetPort: 8080 }] },
  }),
  create("create Coupon spring-sale (10%)", coupons, "coupons", {
    apiVersion: "shop.krply.dev/v1",
    kind: "Coupon",
    metadata: { name: "spring-sale", namespace: ns },
    spec: { code: "SPRING", percent: 10 },
  }),
  patch("scale Deployment web to 4", `${deployments}/web`, "deployments", {
    spec: { replicas: 4 },
  }),
  patch(
    "re-image Deployment cart to shop/cart:1.1",
    `${deployments}/cart`,
    "deployments",
    image("cart", "registry.example/shop/cart:1.1"),
  ),
  patch("edit ConfigMap shop-settings: currency USD", `${configmaps}/shop-settings`, "configmaps", {
    data: { currency: "USD" },
  }),
  patch("relabel Service web: tier=edge, team=storefront", `${services}/web`, "services", {
    metadata: { labels: { tier: "edge", team: "storefront" } },
  }),
  patch("raise Coupon spring-sale to 15%", `${coupons}/spring-sale`, "coupons", {
    spec: { percent: 15 },
  }),
];

/** Writes made while the recorder is paused; the forced compaction then removes them from etcd's history. */
export const PAUSED_STEPS: readonly ShopStep[] = [
  patch(
    "edit ConfigMap shop-settings: checkout disabled (recorder paused)",
    `${configmaps}/shop-settings`,
    "configmaps",
    { data: { checkout: "disabled" } },
  ),
  patch(
    "edit ConfigMap shop-settings: currency GBP (recorder paused)",
    `${configmaps}/shop-settings`,
    "configmaps",
    {
      data: { currency: "GBP" },
    },
  ),
];

/** After the gap: recording goes on. */
export const RESUMED_STEPS: readonly ShopStep[] = [
  patch(
    "re-image Deployment web to nginx:1.28",
    `${deployments}/web`,
    "deployments",
    image("web", "nginx:1.28"),
  ),
  patch(
    "edit ConfigMap shop-settings: checkout enabled",
    `${configmaps}/shop-settings`,
    "configmaps",
    {
      data: { checkout: "enabled" },
    },
  ),
];

/**
 * The highest resourceVersion written per resource: the recorder has caught up with a step list once
 * each of its streams has committed at least this RV. RVs are compared as numbers: Kubernetes calls
 * them opaque, but the recorder only ever meets this harness's etcd revisions here.
 */
export function lastWrittenRv(writes: { resource: string; rv: string }[]): Map<string, bigint> {
  const last = new Map<string, bigint>();
  for (const w of writes) {
    const rv = BigInt(w.rv);
    if ((last.get(w.resource) ?? 0n) < rv) last.set(w.resource, rv);
  }
  return last;
}

/** True once every resource's stream has committed the last RV written to it. */
export function caughtUp(
  want: Map<string, bigint>,
  streams: { resource: string; durableRv: string | null }[],
): boolean {
  for (const [resource, rv] of want) {
    const s = streams.find(x => x.resource === resource);
    if (!s?.durableRv || !/^\d+$/.test(s.durableRv) || BigInt(s.durableRv) < rv) return false;
  }
  return true;
}
