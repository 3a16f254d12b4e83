import type { KubeClient } from "../kube/client";
import { ApiError } from "../kube/errors";
import type { PlanRef } from "./types";

/** The URL of one object of a plan in the target. */
export function objectPath(ref: PlanRef): string {
  const prefix = ref.group === "" ? `/api/${ref.version}` : `/apis/${ref.group}/${ref.version}`;
  const ns = ref.namespace ? `/namespaces/${encodeURIComponent(ref.namespace)}` : "";
  return `${prefix}${ns}/${ref.resource}/${encodeURIComponent(ref.name)}`;
}

export const APPLY_PATCH = "application/apply-patch+yaml";

/**
 * One server-side apply of a manifest: never forced, with the plan's field manager. JSON is YAML,
 * so the manifest goes as JSON text under the apply-patch content type.
 */
export function applyPatch(
  client: KubeClient,
  ref: PlanRef,
  manifest: Record<string, unknown>,
  fieldManager: string,
  dryRun: boolean,
  signal?: AbortSignal,
): Promise<{ status: number; data: Record<string, unknown> }> {
  return client.jsonWithStatus<Record<string, unknown>>(objectPath(ref), {
    method: "PATCH",
    query: { fieldManager, force: false, dryRun: dryRun ? "All" : undefined },
    body: JSON.stringify(manifest),
    contentType: APPLY_PATCH,
    signal,
  });
}

/** GETs an object, or null when it does not exist. */
export async function getOrNull(
  client: KubeClient,
  path: string,
): Promise<Record<string, unknown> | null> {
  try {
    return await client.json<Record<string, unknown>>(path);
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return null;
    throw err;
  }
}

/** Runs fn over items with at most `limit` in flight, keeping results in item order. */
export async function mapBounded<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    for (;;) {
      const i = next++;
      if (i >= items.length) return;
      out[i] = await fn(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return out;
}

/** The text of any failure, without a stack. */
export const messageOf = (err: unknown): string =>
  err instanceof Error ? err.message : String(err);
