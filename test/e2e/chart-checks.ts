import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { kubeRequest, startApiServer, type ApiServer } from "../apiserver";
import { ensureHelm } from "../helm/build";
import { PLAN_LABEL, rbacViolations, type PolicyRule } from "../../deploy/finalize";

// Checks of the finalized chart that build.test.ts runs after its one `npm run build` (a second build
// in parallel would double the slowest step of the e2e project). The chart is rendered with a real
// helm and installed into an API server of its own: the shared one also runs `pepr dev`, whose
// webhook has the same name.

type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

let out = "";
let helm = "";

function docsOf(text: string): Doc[] {
  return parseAllDocuments(text)
    .map(d => d.toJS() as Doc | null)
    .filter((d): d is Doc => d !== null);
}

function render(...args: string[]): Doc[] {
  const text = execFileSync(
    helm,
    ["template", "krply", join(out, "krply-chart"), "-n", "pepr-system", ...args],
    { encoding: "utf8" },
  );
  return docsOf(text);
}

const byKind = (docs: Doc[], kind: string) => docs.filter(d => d.kind === kind);

/** Registers the chart suites over a build output folder that the caller has built. */
export function describeChart(dist: string): void {
  beforeAll(async () => {
    out = dist;
    helm = await ensureHelm();
  }, 900_000);

  describe("the finalized chart", () => {
    it("passes helm lint", () => {
      expect(
        execFileSync(helm, ["lint", join(out, "krply-chart")], { encoding: "utf8" }),
      ).toContain("0 chart(s) failed");
    });

    it("never sends an unlabelled write to krply", () => {
      for (const docs of [
        render(),
        docsOf(readFileSync(join(out, "pepr-module-krply.yaml"), "utf8")),
      ]) {
        const hooks = byKind(docs, "ValidatingWebhookConfiguration").flatMap(
          d => d.webhooks as Doc[],
        );
        expect(hooks).toHaveLength(2);
        for (const hook of hooks) {
          const onlyPlans = (hook.rules as Doc[]).every(
            r => r.apiGroups.join() === "krply.dev" && r.resources.join() === "replayplans",
          );
          // Every webhook either selects on the plan label or sees nothing but ReplayPlans.
          expect(onlyPlans || hook.objectSelector?.matchExpressions?.[0]?.key === PLAN_LABEL).toBe(
            true,
          );
        }
      }
    });

    it("grants no wildcard and no Secrets, in the chart and in the manifests", () => {
      for (const docs of [
        render(),
        docsOf(readFileSync(join(out, "pepr-module-krply.yaml"), "utf8")),
      ]) {
        const rules = byKind(docs, "ClusterRole").flatMap(d => d.rules as PolicyRule[]);
        expect(rules.length).toBeGreaterThan(0);
        expect(rbacViolations(rules, false)).toEqual([]);
      }
    });

    it("keeps the webhook path whatever webhookTimeout is", () => {
      const path = (docs: Doc[]) =>
        byKind(docs, "ValidatingWebhookConfiguration")[0].webhooks[0].clientConfig.service.path;
      const other = render("--set", "admission.webhookTimeout=15");
      expect(path(other)).toBe(path(render()));
      expect(byKind(other, "ValidatingWebhookConfiguration")[0].webhooks[0].timeoutSeconds).toBe(
        15,
      );
    });

    it("adds the journal volume, the sidecar and its Service; values size the volume", () => {
      const docs = render("--set", "krply.journal.size=3Gi");
      const claim = byKind(docs, "PersistentVolumeClaim")[0];
      expect(claim.spec.resources.requests.storage).toBe("3Gi");
      expect(claim.metadata.annotations["helm.sh/resource-policy"]).toBe("keep");
      const watcher = byKind(docs, "Deployment").find(
        d => d.metadata.name === "pepr-krply-watcher",
      );
      expect(watcher?.spec.strategy.type).toBe("Recreate");
      const pod = watcher?.spec.template.spec;
      expect(pod.securityContext.fsGroup).toBe(65532);
      const names = (pod.containers as Doc[]).map(c => c.name).sort();
      expect(names).toEqual(["api", "watcher"]);
      const api = (pod.containers as Doc[]).find(c => c.name === "api");
      expect(api?.readinessProbe.httpGet.path).toBe("/v1/ready");
      expect(api?.securityContext.readOnlyRootFilesystem).toBe(true);
      const service = byKind(docs, "Service").find(s => s.metadata.name === "pepr-krply-api");
      expect(service?.spec.ports[0].port).toBe(8080);
      expect(
        byKind(docs, "CustomResourceDefinition")
          .map(c => c.metadata.name)
          .sort(),
      ).toEqual(["peprstores.pepr.dev", "replayplans.krply.dev"]);
      expect(byKind(docs, "Namespace")).toEqual([]);
    });

    it("binds the Store role to the account the pods run as", () => {
      const binding = byKind(render(), "RoleBinding").find(
        b => b.metadata.name === "pepr-krply-store",
      );
      expect(binding?.subjects).toEqual([
        { kind: "ServiceAccount", name: "pepr-krply", namespace: "pepr-system" },
      ]);
    });

    it("refuses a release namespace other than pepr-system with the command to use", () => {
      expect(() =>
        execFileSync(helm, ["template", "krply", join(out, "krply-chart"), "-n", "default"], {
          encoding: "utf8",
          stdio: "pipe",
        }),
      ).toThrow(/--create-namespace/);
    });
  });

  describe("helm install into the real API server", () => {
    let api: ApiServer;
    const helmAt = (...args: string[]) =>
      execFileSync(helm, [...args, "--kubeconfig", api.kubeconfigs.admin], {
        encoding: "utf8",
        stdio: "pipe",
        timeout: 120_000,
      });

    beforeAll(async () => {
      api = await startApiServer();
    }, 300_000);
    afterAll(() => api?.dispose());

    it("installs with the README's command, and an unlabelled write never waits for krply", async () => {
      helmAt(
        "install",
        "krply",
        join(out, "krply-chart"),
        "-n",
        "pepr-system",
        "--create-namespace",
      );
      // No admission pod runs here (the harness has no kubelet): an unlabelled ConfigMap is admitted
      // because the webhook never selects it. A labelled one would be sent to the webhook's Service,
      // whose name leaves this machine, so that half waits for the harness's egress proxy.
      const res = await fetchAs(api, "/api/v1/namespaces/default/configmaps", {
        metadata: { name: "unlabelled" },
        data: { a: "1" },
      });
      expect(res.status).toBe(201);
      expect(helmAt("upgrade", "krply", join(out, "krply-chart"), "-n", "pepr-system")).toContain(
        "has been upgraded",
      );
      helmAt("uninstall", "krply", "-n", "pepr-system");
      // The journal's claim and the digest key are kept on purpose (resource-policy keep).
      const claim = await getAs(
        api,
        "/api/v1/namespaces/pepr-system/persistentvolumeclaims/pepr-krply-journal",
      );
      expect(claim.status).toBe(200);
      helmAt("install", "krply", join(out, "krply-chart"), "-n", "pepr-system");
    }, 300_000);
  });
}

function fetchAs(api: ApiServer, path: string, body: Record<string, unknown>) {
  return kubeRequest(api.info, "admin", "POST", path, body);
}

function getAs(api: ApiServer, path: string) {
  return kubeRequest(api.info, "admin", "GET", path);
}
