import { loadConfig, type Env, type ReplaySettings } from "../config";
import { clientFor, loadKubeConfig } from "../kube/client";
import { logger, type Logger } from "../log/logger";
import {
  reviewReplayPlanChange,
  stampReplayPlan,
  type PlanAdmission,
  type PlanReview,
  type PlanStamp,
} from "./approval";
import { admitReplayWrite, type GateDecision, type GateRequest, type PlanLookup } from "./gate";
import { PlanClient } from "./plan-client";
import { cachedPlanLookup } from "./plan-cache";
import { reconcileReplayPlan, type ReconcileOutcome } from "./reconcile";

/**
 * What the replay capabilities run, built on first use: nothing is read or connected at import, as
 * Pepr loads the module in every pod. The API client comes from the in-cluster config in a pod and
 * from KUBECONFIG under `pepr dev`.
 */
export class ReplayRuntime {
  private settingsValue: ReplaySettings | undefined;
  private clientValue: Promise<PlanClient> | undefined;
  private lookupValue: PlanLookup | undefined;
  private clusterUidValue: Promise<string> | undefined;
  private readonly rechecks = new Map<string, NodeJS.Timeout>();
  private readonly log: Logger;

  constructor(
    private readonly env: Env,
    private readonly connect: () => Promise<PlanClient> = async () =>
      new PlanClient(await clientFor(loadKubeConfig())),
  ) {
    this.log = logger("replay");
  }

  /** The approval and gate settings; an invalid configuration throws its ConfigError. */
  settings(): ReplaySettings {
    this.settingsValue ??= loadConfig(this.env).replay;
    return this.settingsValue;
  }

  private client(): Promise<PlanClient> {
    if (!this.clientValue) {
      this.clientValue = this.connect();
      // A failed connection is retried on the next request instead of failing every later one.
      this.clientValue.catch(() => (this.clientValue = undefined));
    }
    return this.clientValue;
  }

  private lookup(): PlanLookup {
    this.lookupValue ??= cachedPlanLookup(async id => (await this.client()).listParts(id), {
      ttlMs: this.settings().gateCacheMs,
    });
    return this.lookupValue;
  }

  private clusterUid(): Promise<string> {
    if (!this.clusterUidValue) {
      this.clusterUidValue = this.client().then(c => c.kubeSystemUid());
      this.clusterUidValue.catch(() => (this.clusterUidValue = undefined));
    }
    return this.clusterUidValue;
  }

  /** The Validate handler of the replay gate. Never throws: any failure denies. */
  async gate(req: GateRequest): Promise<GateDecision> {
    let decision: GateDecision;
    try {
      this.settings();
      decision = await admitReplayWrite(req, {
        lookup: id => this.lookup()(id),
        clusterUid: () => this.clusterUid(),
      });
    } catch (err) {
      decision = {
        allowed: false,
        message: `krply replay gate denied ${req.operation} of ${req.kind} ${req.name}: ${String(err)}`,
      };
    }
    if (!decision.allowed) this.log.info({ decision: decision.message }, "replay write denied");
    return decision;
  }

  /** The Mutate handler on ReplayPlans. */
  stamp(req: PlanAdmission, now = new Date()): PlanStamp {
    return stampReplayPlan(req, this.settings(), now);
  }

  /** The Validate handler on ReplayPlans. */
  review(req: PlanAdmission, now = new Date()): PlanReview {
    return reviewReplayPlanChange(req, this.settings(), now);
  }

  /**
   * The Reconcile handler on ReplayPlans: writes status, revokes an expired approval, and looks at the
   * plan again when its approval expires (no event would wake the watcher then).
   */
  async reconcile(raw: unknown, now = new Date()): Promise<ReconcileOutcome | undefined> {
    try {
      const client = await this.client();
      const outcome = await reconcileReplayPlan(raw, client, now);
      this.scheduleRecheck(outcome);
      if (outcome.skipped)
        this.log.warn({ plan: outcome.name, why: outcome.skipped }, "ReplayPlan skipped");
      return outcome;
    } catch (err) {
      this.log.error({ err }, "ReplayPlan reconcile failed");
      return undefined;
    }
  }

  private scheduleRecheck(outcome: ReconcileOutcome): void {
    const { name, recheckAt } = outcome;
    clearTimeout(this.rechecks.get(name));
    this.rechecks.delete(name);
    if (!recheckAt) return;
    // Timers longer than 2^31-1 ms fire at once; a later event or recheck picks the plan up again.
    const delay = Math.min(Math.max(0, recheckAt.getTime() - Date.now()) + 250, 2 ** 31 - 1);
    const timer = setTimeout(() => {
      this.rechecks.delete(name);
      void this.recheck(name);
    }, delay);
    timer.unref();
    this.rechecks.set(name, timer);
  }

  private async recheck(name: string): Promise<void> {
    try {
      const plan = await (await this.client()).get(name);
      if (plan !== undefined) await this.reconcile(plan);
    } catch (err) {
      this.log.error({ err, plan: name }, "ReplayPlan recheck failed");
    }
  }

  /** Cancels pending rechecks (tests, shutdown). */
  stop(): void {
    for (const t of this.rechecks.values()) clearTimeout(t);
    this.rechecks.clear();
  }
}

let shared: ReplayRuntime | undefined;

/** The replay runtime of this process, created on first use from process.env. */
export function processReplay(): ReplayRuntime {
  shared ??= new ReplayRuntime(process.env);
  return shared;
}
