// Its own module, free of zod, so `krply --help` can show it without loading the discovery code.
/** What the recorder watches when nothing is configured. */
export const DefaultResources: readonly string[] = [
  "namespaces",
  "configmaps",
  "services",
  "deployments",
  "statefulsets",
  "daemonsets",
  "runtimeclasses",
  "pods",
];
