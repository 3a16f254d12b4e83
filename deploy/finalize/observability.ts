import { PROBE_PATHS } from "../../src/metrics/serve";
import { helm, templateOf } from "./helm-text";

type Json = Record<string, unknown>;

/**
 * Where the recorder answers Kubernetes' probes: on its metrics port, beside /metrics. The watcher's
 * own Pepr /healthz (port 3000) says only that Pepr's server runs, not that the recorder records.
 */
export const WATCHER_PROBE_PATHS = PROBE_PATHS;

/** The watcher container's probes, as values (Pepr's template renders .Values.watcher.*Probe). */
export function watcherProbes(): { readinessProbe: Json; livenessProbe: Json } {
  // Port "metrics" is the watcher container's 9464 (objects.ts watcherAdditions).
  const probe = (path: string, initialDelaySeconds: number, failureThreshold: number) => ({
    httpGet: { path, port: "metrics", scheme: "HTTP" },
    initialDelaySeconds,
    periodSeconds: 10,
    failureThreshold,
  });
  return {
    // Unready while the recorder starts, retries, refuses a damaged journal or lacks a stream's
    // baseline; traffic to the pod's Services stops, nothing restarts (that would not repair it).
    readinessProbe: probe(WATCHER_PROBE_PATHS.readiness, 10, 3),
    // The metrics server starts only once Pepr's Store is ready, so liveness waits 30 s and then
    // allows a minute of failures: only a hung process fails it.
    livenessProbe: probe(WATCHER_PROBE_PATHS.liveness, 30, 6),
  };
}

/** Defaults of `krply.serviceMonitor` in values.yaml. */
export const SERVICE_MONITOR_VALUES = {
  enabled: false,
  interval: "30s",
  labels: {} as Record<string, string>,
};

/**
 * One ServiceMonitor for both of krply's endpoints, through the API Service: the sidecar's /metrics
 * (port http, 8080) and the recorder's (port recorder-metrics, 9464). Pepr's own ServiceMonitors
 * (watcher.serviceMonitor, admission.serviceMonitor) scrape only Pepr's registry on port 3000.
 */
export function serviceMonitorTemplate(): string {
  const endpoint = (port: string) => ({
    port,
    path: "/metrics",
    scheme: "http",
    interval: helm(".Values.krply.serviceMonitor.interval | quote"),
  });
  const monitor = {
    apiVersion: "monitoring.coreos.com/v1",
    kind: "ServiceMonitor",
    metadata: {
      name: helm('printf "%s-krply" .Values.uuid'),
      namespace: helm(".Release.Namespace"),
      // Prometheus picks ServiceMonitors by label (e.g. `release: prometheus`): values add them.
      labels: helm(
        'merge (dict "app.kubernetes.io/name" "krply") .Values.krply.serviceMonitor.labels | toJson',
      ),
    },
    spec: {
      selector: {
        matchLabels: {
          "app.kubernetes.io/name": "krply",
          "app.kubernetes.io/component": "api",
        },
      },
      namespaceSelector: { matchNames: [helm(".Release.Namespace")] },
      endpoints: [endpoint("http"), endpoint("recorder-metrics")],
    },
  };
  return templateOf([monitor], ".Values.krply.serviceMonitor.enabled");
}
