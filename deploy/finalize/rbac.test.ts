import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  controllerRules,
  grantOf,
  rbacViolations,
  recorderRules,
  replayRules,
  sidecarRules,
} from "./rbac";

const pkg = JSON.parse(readFileSync(join(__dirname, "..", "..", "package.json"), "utf8")) as {
  pepr: { rbacMode: string; rbac: unknown[]; env: Record<string, string> };
};

describe("scoped RBAC", () => {
  it("grants get, list and watch on exactly the named resources, in their groups", () => {
    expect(recorderRules(["cm", "deployments", "widgets.example.com"], false)).toEqual([
      { apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list", "watch"] },
      {
        apiGroups: ["apiextensions.k8s.io"],
        resources: ["customresourcedefinitions"],
        verbs: ["get", "list", "watch"],
      },
      { apiGroups: ["apps"], resources: ["deployments"], verbs: ["get", "list", "watch"] },
      { apiGroups: ["example.com"], resources: ["widgets"], verbs: ["get", "list", "watch"] },
    ]);
  });

  it("refuses wildcards and unknown built-in names with a message that says what to write", () => {
    expect(() => grantOf("*")).toThrow(/never wildcards/);
    expect(() => grantOf("*.apps")).toThrow(/never wildcards/);
    expect(() => grantOf("gadgets")).toThrow(/plural\.group/);
  });

  it("refuses Secrets unless the values ask for them", () => {
    expect(() => recorderRules(["secrets"], false)).toThrow(/allowSecrets/);
    expect(recorderRules(["secrets"], true)[0]).toEqual({
      apiGroups: [""],
      resources: ["secrets"],
      verbs: ["get", "list", "watch"],
    });
  });

  it("lets replay create, get and patch, never Secrets or CRDs", () => {
    const rules = replayRules(["configmaps", "secrets", "deployments", "crds"]);
    expect(rules.flatMap(r => r.resources).sort()).toEqual(["configmaps", "deployments"]);
    expect(new Set(rules.flatMap(r => r.verbs))).toEqual(new Set(["create", "get", "patch"]));
  });

  it("finds every wildcard and unasked Secrets access", () => {
    expect(
      rbacViolations(
        [
          { apiGroups: ["*"], resources: ["*"], verbs: ["get"] },
          { apiGroups: [""], resources: ["secrets"], verbs: ["get"] },
          { apiGroups: [""], resources: ["pods"], verbs: ["*"] },
        ],
        false,
      ),
    ).toHaveLength(3);
    expect(rbacViolations(controllerRules().concat(sidecarRules()), false)).toEqual([]);
  });

  // `pepr deploy` builds its ClusterRole from package.json, so the scoped rules must live there too.
  it("package.json carries the same scoped rules that pepr deploy applies", () => {
    const resources = pkg.pepr.env.KRPLY_RESOURCES.split(",");
    expect(pkg.pepr.rbacMode).toBe("scoped");
    expect(pkg.pepr.rbac).toEqual([
      ...recorderRules(resources, false),
      ...controllerRules(),
      ...sidecarRules(),
    ]);
  });
});
