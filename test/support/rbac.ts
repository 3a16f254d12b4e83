// RBAC for the harness's users (test/apiserver): the tests and the demo give a user a ClusterRole the
// same way, each applying the objects with its own client.

const GROUP = "rbac.authorization.k8s.io";
const RBAC = `/apis/${GROUP}/v1`;

/** One rule of a ClusterRole. */
export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

/** An object to apply: its API path and its body. */
export interface Applied {
  path: string;
  body: object;
}

/**
 * A ClusterRole named `name` with these rules and its binding to one user, in the order to apply them
 * (server-side apply: the same objects again change nothing).
 */
export function clusterRoleGrant(name: string, rules: PolicyRule[], user: string): Applied[] {
  return [
    {
      path: `${RBAC}/clusterroles/${name}`,
      body: { apiVersion: `${GROUP}/v1`, kind: "ClusterRole", metadata: { name }, rules },
    },
    {
      path: `${RBAC}/clusterrolebindings/${name}`,
      body: {
        apiVersion: `${GROUP}/v1`,
        kind: "ClusterRoleBinding",
        metadata: { name },
        roleRef: { apiGroup: GROUP, kind: "ClusterRole", name },
        subjects: [{ apiGroup: GROUP, kind: "User", name: user }],
      },
    },
  ];
}
