import { createHash, randomBytes } from "node:crypto";
import { canonicalJson } from "../event";
import type { Plan } from "./types";

/**
 * The digest covers everything an apply would send and where: the id (it is in every label and the
 * field manager), source, target, namespaces and each object's exact manifest. Warnings, times and
 * the exclusion list are commentary, so they are left out.
 */
export function planDigest(plan: Omit<Plan, "digest">): string {
  const content = {
    id: plan.id,
    fieldManager: plan.fieldManager,
    source: plan.source,
    target: plan.target,
    namespaceMap: plan.namespaceMap,
    targetNamespaces: plan.targetNamespaces,
    objects: plan.objects.map(o => ({ ref: o.ref, manifest: o.manifest })),
  };
  return `sha256:${createHash("sha256").update(canonicalJson(content)).digest("hex")}`;
}

/** A new plan id: short, lowercase, valid as a label value, a field manager suffix and a CR name. */
export function newPlanId(): string {
  return `rp-${randomBytes(5).toString("hex")}`;
}
