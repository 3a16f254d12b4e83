import { ReplayPlanSchema, type ReplayPlan } from "./replay-plan-cr";
import type { PlanLookup } from "./gate";

/** Reads the raw ReplayPlan objects labelled with one plan id (a LIST by label selector). */
export type PlanFetch = (planId: string) => Promise<unknown[]>;

export interface PlanCacheOptions {
  /** How long a fully approved plan is reused. */
  ttlMs: number;
  now?: () => number;
}

/**
 * A short cache in front of the API server for the gate. Only a plan whose every part is approved is
 * cached, so a plan approved a moment after a denial is admitted at once; a revocation takes effect at
 * most ttlMs later. Concurrent lookups of one id share one request. A part that does not match the
 * schema makes the lookup fail, and the gate then denies.
 */
export function cachedPlanLookup(fetch: PlanFetch, options: PlanCacheOptions): PlanLookup {
  const now = options.now ?? Date.now;
  const cache = new Map<string, { parts: ReplayPlan[]; until: number }>();
  const inflight = new Map<string, Promise<ReplayPlan[]>>();

  async function load(planId: string): Promise<ReplayPlan[]> {
    const raw = await fetch(planId);
    const parts = raw.map(item => {
      const parsed = ReplayPlanSchema.safeParse(item);
      if (!parsed.success) {
        const name = (item as { metadata?: { name?: string } })?.metadata?.name ?? "<unnamed>";
        throw new Error(`ReplayPlan ${name} does not match the krply.dev/v1alpha1 schema`, {
          cause: parsed.error,
        });
      }
      return parsed.data;
    });
    if (parts.length > 0 && parts.every(p => p.spec.approved === true)) {
      cache.set(planId, { parts, until: now() + options.ttlMs });
    } else {
      cache.delete(planId);
    }
    return parts;
  }

  return planId => {
    const hit = cache.get(planId);
    if (hit && hit.until > now()) return Promise.resolve(hit.parts);
    let pending = inflight.get(planId);
    if (!pending) {
      pending = load(planId).finally(() => inflight.delete(planId));
      inflight.set(planId, pending);
    }
    return pending;
  };
}
