/**
 * Annotations in which tools keep a copy of the manifest they applied, values included: kubectl's
 * client-side apply and kapp (Carvel). On a redacted object they are digested like its values.
 */
export const MANIFEST_COPY_ANNOTATIONS: readonly string[] = [
  "kubectl.kubernetes.io/last-applied-configuration",
  "kapp.k14s.io/original",
];
