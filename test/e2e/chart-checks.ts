import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse, parseAllDocuments } from "yaml";
import { ensureHelm } from "../helm/build";
import {
  PLAN_LABEL,
  rbacViolations,
  undocumentedValues,
  WATCHER_PROBE_PATHS,
  type PolicyRule,
} from "../../deploy/finalize";

// Checks of the finalized chart that build.test.ts runs after its one `npm run build` (a second build
// in parallel would double the slowest step of the e2e project). The chart is rendered with a real
// helm and installed into an API server of its own: the shared one also runs `pepr dev`, whose
// webhook has the same name.

export type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

let out = "";
let helm = "";

/** The helm binary built from Go modules (test/helm), once describeChart's setup has run. */
export const helmBinary = () => helm;

export function docsOf(text: string): Doc[] {
  return parseAllDocuments(text)
    .map(d => d.toJS() as Doc | null)
    .filter((d): d is Doc => d !== null);
}

/** The finalized chart's templates rendered by the real helm, with `--set`-style arguments. */
export function render(...args: string[]): Doc[] {
  const text = execFileSync(
    helm,
    ["template", "krply", join(out, "krply-chart"), "-n", "pepr-system", ...args],
    { encoding: "utf8" },
  );
  return docsOf(text);
}

export const byKind = (docs: Doc[], kind: string) => docs.filter(d => d.kind === kind);

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
      // In its release namespace and with non-default values, lint renders every template cleanly.
      const strict = execFileSync(
        helm,
        ["lint", "--strict", join(out, "krply-chart"), "-n", "pepr-system"].concat(
          ...[
            "admission.webhookTimeout=25",
            "krply.serviceMonitor.enabled=true",
            "krply.replay.namespaces={shop}",
          ].map(v => ["--set", v]),
        ),
        { encoding: "utf8" },
      );
      expect(strict).toContain("0 chart(s) failed");
      expect(strict).not.toMatch(/\[(ERROR|WARNING)\]/);
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
      expect(service?.spec.publishNotReadyAddresses).toBe(true);
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

    it("renders a ServiceMonitor over the sidecar's and the recorder's metrics only when asked", () => {
      expect(byKind(render(), "ServiceMonitor")).toEqual([]);
      const docs = render(
        "--set",
        "krply.serviceMonitor.enabled=true",
        "--set",
        "krply.serviceMonitor.labels.release=prometheus",
        "--set",
        "krply.serviceMonitor.interval=15s",
      );
      const [monitor] = byKind(docs, "ServiceMonitor").filter(m =>
        m.metadata.name.endsWith("-krply"),
      );
      expect(monitor.apiVersion).toBe("monitoring.coreos.com/v1");
      expect(monitor.metadata.labels.release).toBe("prometheus");
      // The monitor selects the API Service, and each endpoint names one of its ports.
      const service = byKind(docs, "Service").find(s => s.metadata.name === "pepr-krply-api");
      for (const [k, v] of Object.entries(monitor.spec.selector.matchLabels)) {
        expect(service?.metadata.labels[k]).toBe(v);
      }
      expect(monitor.spec.namespaceSelector.matchNames).toEqual(["pepr-system"]);
      const ports = new Map((service?.spec.ports as Doc[]).map(p => [p.name, p]));
      expect(monitor.spec.endpoints.map((e: Doc) => [e.port, e.path, e.interval])).toEqual([
        ["http", "/metrics", "15s"],
        ["recorder-metrics", "/metrics", "15s"],
      ]);
      // Each Service port leads to a container port of the pod: the sidecar's 8080 and the
      // recorder's 9464, where KRPLY_METRICS_PORT tells the recorder to listen.
      const pod = byKind(docs, "Deployment").find(d => d.metadata.name === "pepr-krply-watcher")
        ?.spec.template.spec;
      const containerPorts = new Map(
        (pod.containers as Doc[]).flatMap(c => (c.ports as Doc[]).map(p => [p.name, p])),
      );
      expect(containerPorts.get(ports.get("http")?.targetPort)?.containerPort).toBe(8080);
      expect(containerPorts.get(ports.get("recorder-metrics")?.targetPort)?.containerPort).toBe(
        9464,
      );
      const watcher = (pod.containers as Doc[]).find(c => c.name === "watcher");
      expect(watcher?.env.find((e: Doc) => e.name === "KRPLY_METRICS_PORT")?.value).toBe("9464");
    });

    it("probes the recorder's readiness and liveness on its metrics port, in chart and manifests", () => {
      for (const docs of [
        render(),
        docsOf(readFileSync(join(out, "pepr-module-krply.yaml"), "utf8")),
      ]) {
        const watcher = (
          byKind(docs, "Deployment").find(d => d.metadata.name === "pepr-krply-watcher")?.spec
            .template.spec.containers as Doc[]
        ).find(c => c.name === "watcher");
        expect(watcher?.readinessProbe.httpGet).toEqual({
          path: WATCHER_PROBE_PATHS.readiness,
          port: "metrics",
          scheme: "HTTP",
        });
        expect(watcher?.livenessProbe.httpGet).toEqual({
          path: WATCHER_PROBE_PATHS.liveness,
          port: "metrics",
          scheme: "HTTP",
        });
        // The named port is the recorder's metrics port, where KRPLY_METRICS_PORT has it listen.
        const metrics = (watcher?.ports as Doc[]).find(p => p.name === "metrics");
        expect(metrics?.containerPort).toBe(9464);
        expect(watcher?.env.find((e: Doc) => e.name === "KRPLY_METRICS_PORT")?.value).toBe("9464");
      }
    });

    it("describes every value in values.schema.json", () => {
      const chart = join(out, "krply-chart");
      const values = parse(readFileSync(join(chart, "values.yaml"), "utf8")) as Doc;
      const schema = JSON.parse(readFileSync(join(chart, "values.schema.json"), "utf8")) as Doc;
      expect(Object.keys(values).length).toBeGreaterThan(5);
      expect(undocumentedValues(values, schema)).toEqual([]);
    });

    it("renders non-default values, each where it belongs", () => {
      const docs = render(
        ...[
          "admission.webhookTimeout=25",
          "krply.journal.storageClassName=fast",
          "krply.replay.namespaces={shop,shop-restore}",
          "additionalIgnoredNamespaces={flux}",
          "watcher.podLabels.team=sre",
          "watcher.readinessProbe.periodSeconds=7",
          "krply.api.resources.limits.memory=1Gi",
        ].flatMap(v => ["--set", v]),
      );
      const hook = byKind(docs, "ValidatingWebhookConfiguration")[0].webhooks[0];
      expect(hook.timeoutSeconds).toBe(25);
      expect(hook.clientConfig.service.path).toMatch(/^\/validate\/[0-9a-f]{10,}$/);
      expect(hook.namespaceSelector.matchExpressions[0].values).toContain("flux");
      expect(byKind(docs, "PersistentVolumeClaim")[0].spec.storageClassName).toBe("fast");
      const bindings = byKind(docs, "RoleBinding").filter(
        b => b.metadata.name === "pepr-krply-replay",
      );
      expect(bindings.map(b => b.metadata.namespace).sort()).toEqual(["shop", "shop-restore"]);
      const roles = byKind(docs, "ClusterRole").map(r => r.metadata.name);
      for (const b of bindings) expect(roles).toContain(b.roleRef.name);
      const pod = byKind(docs, "Deployment").find(d => d.metadata.name === "pepr-krply-watcher")
        ?.spec.template;
      expect(pod.metadata.labels.team).toBe("sre");
      const containers = pod.spec.containers as Doc[];
      expect(containers.find(c => c.name === "watcher")?.readinessProbe.periodSeconds).toBe(7);
      expect(containers.find(c => c.name === "api")?.resources.limits.memory).toBe("1Gi");
    });
  });
}
