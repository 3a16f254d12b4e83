import { request } from "node:http";
import type { ApiServerConnection } from "./types";
import { kubeRequest } from "./rest";

/** etcd's current revision and the last revision compacted through the apiserver's protocol (0 if none). */
export interface RevisionInfo {
  revision: number;
  compactedRevision: number;
}

/** Result of POST /compact; cacheObserved is only set when asked to wait for the watch cache. */
export interface CompactResult extends RevisionInfo {
  cacheObserved?: boolean;
}

export interface CompactOptions {
  /**
   * Also wait (up to 20 s) until cached resources answer 410 below the compacted revision: the watch cache
   * re-reads it only every 15 s. Uncached configmaps see the compaction at once, without waiting.
   */
  waitForCache?: boolean;
}

// Plain HTTP on loopback: the control endpoint is the harness's own, not the Kubernetes API.
function call(controlUrl: string, method: string, path: string): Promise<unknown> {
  return new Promise((resolveBody, reject) => {
    const req = request(new URL(path, controlUrl), { method }, res => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("error", reject);
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        const status = res.statusCode ?? 0;
        if (status >= 300)
          reject(new Error(`${method} ${path} on the harness: HTTP ${status}: ${text}`));
        else resolveBody(JSON.parse(text) as unknown);
      });
    });
    req.on("error", reject);
    req.end();
  });
}

/** Compacts etcd at its current revision the way kube-apiserver's compactor does; affects every user. */
export async function compactApiServer(
  controlUrl: string,
  options: CompactOptions = {},
): Promise<CompactResult> {
  const path = options.waitForCache ? "/compact?wait=cache" : "/compact";
  return (await call(controlUrl, "POST", path)) as CompactResult;
}

/** Reads etcd's current and compacted revisions. */
export async function apiServerRevision(controlUrl: string): Promise<RevisionInfo> {
  return (await call(controlUrl, "GET", "/revision")) as RevisionInfo;
}

/** Asks the harness process to stop cleanly (it answers first, then stops). */
export async function shutdownApiServer(controlUrl: string): Promise<void> {
  await call(controlUrl, "POST", "/shutdown");
}

async function applyAsAdmin(
  info: ApiServerConnection,
  path: string,
  manifest: object,
): Promise<void> {
  const res = await kubeRequest(
    info,
    "admin",
    "PATCH",
    `${path}?fieldManager=krply-apiserver-harness&force=true`,
    JSON.stringify(manifest),
  );
  if (res.status >= 300) throw new Error(`apply ${path}: HTTP ${res.status}: ${res.text}`);
}

/**
 * Lets the replayer user create/patch/get in `namespace`. RBAC cannot match namespace names by pattern, so
 * `replay-*` is enforced here: the namespace is created if needed and bound to the krply-replayer ClusterRole.
 */
export async function grantReplayer(info: ApiServerConnection, namespace: string): Promise<void> {
  if (!/^replay-[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(namespace)) {
    throw new Error(`grantReplayer: ${namespace} does not match replay-*`);
  }
  const labels = { "krply.dev/test-harness": "true" };
  await applyAsAdmin(info, `/api/v1/namespaces/${namespace}`, {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: namespace, labels },
  });
  await applyAsAdmin(
    info,
    `/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/rolebindings/krply-replayer`,
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name: "krply-replayer", namespace, labels },
      roleRef: {
        apiGroup: "rbac.authorization.k8s.io",
        kind: "ClusterRole",
        name: "krply-replayer",
      },
      subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "replayer" }],
    },
  );
  await waitUntilAllowed(info, "replayer", namespace, "create", "configmaps");
}

/**
 * Polls a SubjectAccessReview until `user` may `verb` `resource`: the RBAC authorizer reads bindings through
 * informers, so a binding that was just written can still be denied for a moment.
 */
export async function waitUntilAllowed(
  info: ApiServerConnection,
  user: string,
  namespace: string,
  verb: string,
  resource: string,
  group = "",
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const review = {
    apiVersion: "authorization.k8s.io/v1",
    kind: "SubjectAccessReview",
    spec: { user, resourceAttributes: { namespace, verb, group, resource } },
  };
  for (;;) {
    const res = await kubeRequest(
      info,
      "admin",
      "POST",
      "/apis/authorization.k8s.io/v1/subjectaccessreviews",
      review,
    );
    if (res.status === 201 && res.json<{ status?: { allowed?: boolean } }>().status?.allowed)
      return;
    if (Date.now() > deadline) {
      throw new Error(`${user} still may not ${verb} ${resource} in ${namespace}: ${res.text}`);
    }
    await new Promise(done => setTimeout(done, 50));
  }
}
