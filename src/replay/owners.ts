import type { KubeClient } from "../kube/client";
import { getOrNull, objectPath } from "./requests";
import type { Plan, PlanObject } from "./types";

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** A UID no object has: the dry run of an object whose owner the plan creates first. */
export const PENDING_OWNER_UID = "00000000-0000-0000-0000-000000000000";

/**
 * Fills each owner reference's UID from the owner as it exists in the target, never from the source.
 * The owner must be in the plan (it is looked up under its target name). A dry run may meet an owner
 * the plan has not created yet and uses a UID that matches nothing; an apply fails instead.
 */
export async function resolveOwners(
  client: KubeClient,
  plan: Plan,
  obj: PlanObject,
  mode: "dry-run" | "apply",
): Promise<Record<string, unknown>> {
  const md = isRecord(obj.manifest.metadata) ? obj.manifest.metadata : {};
  const refs = Array.isArray(md.ownerReferences) ? md.ownerReferences : [];
  if (refs.length === 0) return obj.manifest;
  const manifest = structuredClone(obj.manifest);
  const out = (manifest.metadata as Record<string, unknown>).ownerReferences as Record<
    string,
    unknown
  >[];
  for (const ref of out) {
    const owner = plan.objects.find(
      o =>
        o.ref.kind === ref.kind &&
        o.source.name === ref.name &&
        o.source.namespace === (obj.ref.namespace ? obj.source.namespace : ""),
    );
    if (!owner) throw new Error(`owner ${String(ref.kind)}/${String(ref.name)} is not in the plan`);
    ref.name = owner.ref.name;
    const live = await getOrNull(client, objectPath(owner.ref));
    const uid = isRecord(live?.metadata) ? live.metadata.uid : undefined;
    if (typeof uid === "string") ref.uid = uid;
    else if (mode === "dry-run") ref.uid = PENDING_OWNER_UID;
    else throw new Error(`owner ${owner.ref.kind}/${owner.ref.name} does not exist in the target`);
  }
  return manifest;
}
