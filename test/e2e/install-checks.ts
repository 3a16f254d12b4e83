import { kubeRequest, type ApiServer } from "../apiserver";
import {
  PLAN_LABEL,
  rbacViolations,
  WATCHER_PROBE_PATHS,
  type PolicyRule,
} from "../../deploy/finalize";

// What an install of krply must leave in the API server, whichever path made it (helm install from
// the README, or `npm run deploy`): one set of assertions, run against what the server stored.

type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const NS = "pepr-system";
const NAME = "pepr-krply";
const CRDS = ["replayplans.krply.dev", "peprstores.pepr.dev"];

/** The objects krply creates, by API path; the two kept on uninstall are marked. */
export const KRPLY_OBJECTS: { path: string; kept?: true; helmOnly?: true }[] = [
  { path: `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${NAME}` },
  { path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/replayplans.krply.dev` },
  { path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/peprstores.pepr.dev` },
  { path: `/apis/rbac.authorization.k8s.io/v1/clusterroles/${NAME}` },
  { path: `/apis/rbac.authorization.k8s.io/v1/clusterroles/${NAME}-replay` },
  { path: `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${NAME}` },
  { path: `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles/${NAME}-store` },
  { path: `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings/${NAME}-store` },
  { path: `/api/v1/namespaces/${NS}/serviceaccounts/${NAME}` },
  { path: `/api/v1/namespaces/${NS}/secrets/${NAME}-module` },
  { path: `/api/v1/namespaces/${NS}/secrets/${NAME}-tls` },
  { path: `/api/v1/namespaces/${NS}/secrets/${NAME}-api-path` },
  { path: `/api/v1/namespaces/${NS}/services/${NAME}` },
  { path: `/api/v1/namespaces/${NS}/services/${NAME}-watcher` },
  { path: `/api/v1/namespaces/${NS}/services/${NAME}-api` },
  { path: `/apis/apps/v1/namespaces/${NS}/deployments/${NAME}` },
  { path: `/apis/apps/v1/namespaces/${NS}/deployments/${NAME}-watcher` },
  { path: `/api/v1/namespaces/${NS}/persistentvolumeclaims/${NAME}-journal`, kept: true },
  { path: `/api/v1/namespaces/${NS}/secrets/${NAME}-digest-key`, kept: true, helmOnly: true },
];

export async function getObject(api: ApiServer, path: string): Promise<Doc | null> {
  const res = await kubeRequest(api.info, "admin", "GET", path);
  if (res.status === 404) return null;
  if (res.status !== 200) throw new Error(`GET ${path}: HTTP ${res.status}: ${res.text}`);
  return res.json<Doc>();
}

async function mustGet(api: ApiServer, path: string): Promise<Doc> {
  const doc = await getObject(api, path);
  if (!doc) throw new Error(`krply's install has no ${path}`);
  return doc;
}

let serial = 0;

/**
 * Asserts everything an install of krply must have put in the API server. The digest-key Secret is
 * made only by the chart (the manifests' recorder keeps its key in a file beside the journal).
 */
export async function expectInstalled(api: ApiServer, opts: { digestKey: boolean }): Promise<void> {
  for (const o of KRPLY_OBJECTS.filter(o => opts.digestKey || !o.helmOnly)) {
    await mustGet(api, o.path);
  }
  const hooks = (await mustGet(api, KRPLY_OBJECTS[0].path)).webhooks as Doc[];
  expect(hooks).toHaveLength(2);
  for (const hook of hooks) {
    const onlyPlans = (hook.rules as Doc[]).every(r => r.resources.join() === "replayplans");
    expect(onlyPlans || hook.objectSelector?.matchExpressions?.[0]?.key === PLAN_LABEL).toBe(true);
  }
  // No admission pod runs in the harness: an unlabelled write is admitted only because the
  // webhook never selects it.
  const cm = await kubeRequest(api.info, "admin", "POST", "/api/v1/namespaces/default/configmaps", {
    metadata: { name: `unlabelled-${process.pid}-${++serial}` },
    data: { a: "1" },
  });
  expect(cm.status).toBe(201);
  // A labelled one is sent to the admission Service, which nothing serves: failurePolicy Fail
  // denies it, and the API server's call went to the harness's egress proxy, which refused it.
  const seen = (await api.egress.log()).events.at(-1)?.seq ?? 0;
  const labelled = await kubeRequest(
    api.info,
    "admin",
    "POST",
    "/api/v1/namespaces/default/configmaps",
    { metadata: { name: `labelled-${process.pid}-${++serial}`, labels: { [PLAN_LABEL]: "p" } } },
  );
  expect(labelled.status).toBeGreaterThanOrEqual(400);
  expect(labelled.text).toMatch(/failed calling webhook/);
  const dialed = (await api.egress.log(seen)).events;
  expect(dialed.length).toBeGreaterThan(0);
  expect(dialed.map(e => e.outcome)).toEqual(dialed.map(() => "refused"));

  for (const crd of CRDS) {
    const doc = await mustGet(
      api,
      `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd}`,
    );
    const established = (doc.status?.conditions ?? []).find((c: Doc) => c.type === "Established");
    expect({ crd, established: established?.status }).toEqual({ crd, established: "True" });
  }
  await expectInstancesListable(api);
  const roles = await Promise.all(
    [NAME, `${NAME}-replay`].map(n =>
      mustGet(api, `/apis/rbac.authorization.k8s.io/v1/clusterroles/${n}`),
    ),
  );
  expect(
    rbacViolations(
      roles.flatMap(r => r.rules as PolicyRule[]),
      false,
    ),
  ).toEqual([]);
  const binding = await mustGet(
    api,
    `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings/${NAME}-store`,
  );
  expect(binding.subjects).toEqual([{ kind: "ServiceAccount", name: NAME, namespace: NS }]);

  const watcher = await mustGet(api, `/apis/apps/v1/namespaces/${NS}/deployments/${NAME}-watcher`);
  expect(watcher.spec.strategy.type).toBe("Recreate");
  const pod = watcher.spec.template.spec;
  expect(pod.securityContext.fsGroup).toBe(65532);
  expect((pod.containers as Doc[]).map(c => c.name).sort()).toEqual(["api", "watcher"]);
  const recorder = (pod.containers as Doc[]).find(c => c.name === "watcher");
  expect(recorder?.readinessProbe.httpGet.path).toBe(WATCHER_PROBE_PATHS.readiness);
  const port = (recorder?.ports as Doc[]).find(
    p => p.name === recorder?.readinessProbe.httpGet.port,
  );
  expect(port?.containerPort).toBe(9464);
  const volumes = new Map((pod.volumes as Doc[]).map(v => [v.name, v]));
  expect(volumes.get("journal")?.persistentVolumeClaim.claimName).toBe(`${NAME}-journal`);

  const service = await mustGet(api, `/api/v1/namespaces/${NS}/services/${NAME}-api`);
  expect((service.spec.ports as Doc[]).map(p => [p.name, p.port])).toEqual([
    ["http", 8080],
    ["recorder-metrics", 9464],
  ]);
  const key = await getObject(api, `/api/v1/namespaces/${NS}/secrets/${NAME}-digest-key`);
  expect(key !== null).toBe(opts.digestKey);
  if (key) expect(Buffer.from(key.data.key, "base64").length).toBeGreaterThanOrEqual(32);
}

/**
 * Polls until none of the objects exists (a CRD goes once its finalizer has run). The bound is
 * generous: kube-apiserver's CRD finalizer waits with minute-long bounds of its own (for in-flight
 * requests and instances to go).
 */
export async function expectGone(api: ApiServer, paths: string[], timeoutMs = 150_000) {
  const deadline = Date.now() + timeoutMs;
  let left = paths;
  while (left.length > 0 && Date.now() < deadline) {
    const found = await Promise.all(
      left.map(async p => {
        const o = await getObject(api, p);
        if (o && failedToListInstances(o)) await nudgeFinalizer(api, p, o);
        return o ? p : null;
      }),
    );
    left = found.filter((p): p is string => p !== null);
    if (left.length > 0) await new Promise(r => setTimeout(r, 500));
  }
  // What holds each one back (a finalizer, a CRD's InstanceDeletionFailed condition), so a failure
  // says why the server has not removed it.
  const held = await Promise.all(
    left.map(async p => {
      const o = await getObject(api, p);
      if (!o) return null;
      const conditions = (o.status?.conditions ?? []) as Doc[];
      return {
        path: p,
        deletionTimestamp: o.metadata.deletionTimestamp ?? null,
        finalizers: o.metadata.finalizers ?? [],
        conditions: conditions.map(c => `${c.type}=${c.status}: ${c.message ?? ""}`),
      };
    }),
  );
  expect(held.filter(h => h !== null)).toEqual([]);
}

/**
 * Waits until the instances of krply's CRDs list with 200. kube-apiserver builds a custom resource's
 * storage on its first request, and its CRD finalizer is often that first request: the list answers
 * "storage is (re)initializing" while the new watch cache fills, the finalizer backs off
 * exponentially, and the CRD outlives a deletion by minutes. In a cluster the watcher's informers
 * list both kinds at start; in the harness nothing runs, so the test lists them as they would, and
 * before every uninstall in case an upgrade replaced the storage.
 */
export async function expectInstancesListable(api: ApiServer, timeoutMs = 60_000): Promise<void> {
  for (const name of CRDS) {
    const crd = await mustGet(
      api,
      `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`,
    );
    const path = instancesPath(crd);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const res = await kubeRequest(api.info, "admin", "GET", path);
      if (res.status === 200) break;
      if (Date.now() > deadline) throw new Error(`GET ${path}: HTTP ${res.status}: ${res.text}`);
      await new Promise(r => setTimeout(r, 100));
    }
  }
}

/** A deleted CRD whose finalizer could not list its instances and now waits out its backoff. */
function failedToListInstances(o: Doc): boolean {
  const conditions = (o.status?.conditions ?? []) as Doc[];
  return conditions.some(
    c => c.type === "Terminating" && c.status === "True" && c.reason === "InstanceDeletionFailed",
  );
}

/**
 * The CRD finalizer retries a failed list with an exponential backoff (5 ms doubling, up to 1000 s),
 * so a watch cache that stayed "(re)initializing" through a dozen retries holds the CRD for minutes
 * after the cache is ready (a README lifecycle run saw it outlive 150 s). Once its instances list,
 * an annotation is what a user would add with `kubectl annotate`: any change other than the
 * Terminating condition puts the CRD back at the front of the finalizer's queue.
 */
async function nudgeFinalizer(api: ApiServer, path: string, crd: Doc): Promise<void> {
  if ((await kubeRequest(api.info, "admin", "GET", instancesPath(crd))).status !== 200) return;
  const res = await kubeRequest(api.info, "admin", "PATCH", path, {
    metadata: { annotations: { "test.krply.dev/requeue": String(Date.now()) } },
  });
  // 404: the finalizer finished meanwhile; anything else is a real failure of the test.
  if (res.status !== 200 && res.status !== 404) {
    throw new Error(`PATCH ${path}: HTTP ${res.status}: ${res.text}`);
  }
}

/** The cluster-wide list of a CRD's instances, at its storage version. */
function instancesPath(crd: Doc): string {
  const version = (crd.spec.versions as Doc[]).find(v => v.storage)?.name;
  return `/apis/${crd.spec.group}/${version}/${crd.spec.names.plural}`;
}
