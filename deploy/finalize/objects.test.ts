import { apiService, sidecarContainer, type KrplySettings } from "./objects";

const settings: KrplySettings = {
  name: "pepr-krply",
  namespace: "pepr-system",
  image: "ghcr.io/krply/krply:0.1.0",
  journalSize: "10Gi",
  storageClassName: "",
  apiAuth: "kubernetes",
  sidecarResources: {},
};

describe("the sidecar and its Service", () => {
  it("keeps the API reachable while the recorder is unready, on the watcher pod's named ports", () => {
    const svc = apiService(settings) as { spec: Record<string, unknown> };
    expect(svc.spec.publishNotReadyAddresses).toBe(true);
    expect(svc.spec.selector).toEqual({
      app: "pepr-krply-watcher",
      "pepr.dev/controller": "watcher",
    });
    expect(svc.spec.ports).toEqual([
      { name: "http", port: 8080, targetPort: "http", protocol: "TCP" },
      { name: "recorder-metrics", port: 9464, targetPort: "metrics", protocol: "TCP" },
    ]);
  });

  it("runs the sidecar non-root with a read-only root filesystem and its own probes", () => {
    const c = sidecarContainer(settings) as Record<string, { [k: string]: unknown }>;
    expect(c.securityContext).toMatchObject({
      runAsNonRoot: true,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
    });
    expect(c.readinessProbe).toMatchObject({ httpGet: { path: "/v1/ready", port: "http" } });
    expect(c.livenessProbe).toMatchObject({ httpGet: { path: "/v1/health", port: "http" } });
  });
});
