// Replay plans over HTTP: list and read stored plans, make one, dry-run one, apply one. Each route is
// authorized by a SubjectAccessReview on krply.dev replayplans; approving stays a Kubernetes write
// (spec.approved on the ReplayPlan), so kubectl and GitOps approve the same way.
import { z } from "zod";
import { openJournalView, openReplayStore, type ReplayStore } from "../../journal";
import { clientFor, loadKubeConfig, type KubeClient } from "../../kube/client";
import {
  ApplyRefused,
  applyStored,
  createPlan,
  dryRunStored,
  loadApplyRuns,
  loadDryRun,
  loadPlan,
  PlanRefused,
} from "../../replay";
import { ApiError } from "../errors";
import { route, type Route } from "../route";
import { anyJson, isoTime, nameText, text } from "../schemas";
import { approvalRoute } from "./replay-approval";

/** Where the replay routes find the journal and the target cluster. */
export interface ReplayDeps {
  /** The cluster plans apply to: the sidecar's own cluster. */
  target(): Promise<KubeClient>;
}

/** In the sidecar: the in-cluster service account (or the kubeconfig of the environment). */
export const configuredReplayDeps: ReplayDeps = {
  target: () => clientFor(loadKubeConfig()),
};

/** The target, or 503 when the sidecar has no way to reach its cluster. */
export async function targetOf(deps: ReplayDeps): Promise<KubeClient> {
  try {
    return await deps.target();
  } catch (err) {
    throw new ApiError("unavailable", "cannot reach the target cluster", [], { cause: err });
  }
}

/** 404 unless the journal holds the plan; checked before the target is contacted. */
export function mustExist(store: ReplayStore, id: string): void {
  if (!store.plan(id)) throw new ApiError("not_found", `no replay plan ${id} in the journal`);
}

export const planId = z.strictObject({
  id: text("id", 64).regex(/^[a-z0-9-]+$/, "is not a plan id"),
});
const LIST = { resource: "replayplans", verb: "list" } as const;
export const GET = { resource: "replayplans", verb: "get" } as const;

export async function withStore<T>(
  journalPath: string,
  readonly: boolean,
  body: (s: ReplayStore) => Promise<T> | T,
): Promise<T> {
  const store = openReplayStore(journalPath, { readonly });
  try {
    return await body(store);
  } finally {
    store.close();
  }
}

/** Planning, approval and apply refusals are answers about the request, not server faults. */
function refusal(err: unknown): never {
  if (err instanceof PlanRefused || err instanceof ApplyRefused)
    throw new ApiError("unanswerable", err.message, [], { cause: err });
  if (err instanceof Error && /^no replay plan /.test(err.message))
    throw new ApiError("not_found", err.message, [], { cause: err });
  throw err;
}

const Summary = z.object({
  id: z.string(),
  createdAt: z.string(),
  digest: z.string(),
  sourceCluster: z.string(),
  targetCluster: z.string(),
  objects: z.number(),
});

/** The replay routes, bound to where they find the journal and the target. */
export function replayRoutes(deps: ReplayDeps = configuredReplayDeps): Route[] {
  return [
    route({
      method: "GET",
      path: "/v1/replay-plans",
      summary: "Stored replay plans, newest first",
      tag: "replay",
      action: LIST,
      response: z.object({ data: z.array(Summary) }),
      handle: ({ app }) =>
        withStore(app.journalPath, true, store => ({
          json: {
            data: store.plans().map(p => ({
              id: p.id,
              createdAt: p.createdAt,
              digest: p.digest,
              sourceCluster: p.sourceCluster,
              targetCluster: p.targetCluster,
              objects: ((p.body as { objects?: unknown[] }).objects ?? []).length,
            })),
          },
        })),
    }),
    route({
      method: "GET",
      path: "/v1/replay-plans/{id}",
      summary: "One plan with its exact manifests, its last dry run and its apply runs",
      tag: "replay",
      action: GET,
      params: planId,
      response: z.object({
        data: z.object({ plan: anyJson, dryRun: anyJson, runs: z.array(anyJson) }),
      }),
      handle: ({ params, app }) =>
        withStore(app.journalPath, true, store => {
          try {
            return {
              json: {
                data: {
                  plan: loadPlan(store, params.id),
                  dryRun: loadDryRun(store, params.id),
                  runs: loadApplyRuns(store, params.id),
                },
              },
            };
          } catch (err) {
            return refusal(err);
          }
        }),
    }),
    approvalRoute(deps),
    route({
      method: "POST",
      path: "/v1/replay-plans",
      summary: "Plan a replay of namespaces at a time or snapshot into this cluster",
      description:
        "Needs replayplans create. Stores the plan in the journal and creates its ReplayPlan objects; " +
        "422 when coverage is incomplete and allowGaps is not set.",
      tag: "replay",
      action: { resource: "replayplans", verb: "create" },
      body: z.strictObject({
        cluster: text("cluster", 512).optional(),
        at: isoTime("at").optional(),
        snapshot: text("snapshot", 128).optional(),
        namespaces: z.array(nameText("namespace")).min(1).max(100),
        namespaceMap: z.record(z.string(), nameText("namespace")).optional(),
        nameMap: z.record(z.string(), nameText("name")).optional(),
        include: z
          .array(z.enum(["secrets", "roles", "pods", "jobs", "pv", "webhooks", "crds"]))
          .optional(),
        allowFinalizers: z.boolean().optional(),
        allowOwnerRefs: z.boolean().optional(),
        allowGaps: z.boolean().optional(),
        intoSourceCluster: z.boolean().optional(),
      }),
      response: z.object({ data: anyJson, warnings: z.array(z.string()) }),
      handle: async ({ body, app }) => {
        if ((body.at === undefined) === (body.snapshot === undefined))
          throw new ApiError("invalid_input", "give either at or snapshot", [
            { in: "body", path: "at", message: "exactly one of at and snapshot is required" },
          ]);
        const inc = new Set(body.include ?? []);
        const target = await targetOf(deps);
        return withStore(app.journalPath, false, async store => {
          const view = openJournalView(app.journalPath);
          try {
            const { plan } = await createPlan(view, store, target, {
              sourceCluster: body.cluster,
              at: body.at,
              snapshotId: body.snapshot,
              sourceNamespaces: body.namespaces,
              intoSourceCluster: body.intoSourceCluster,
              policy: {
                namespaceMap: body.namespaceMap ?? {},
                nameMap: body.nameMap ?? {},
                allowFinalizers: body.allowFinalizers ?? false,
                allowOwnerRefs: body.allowOwnerRefs ?? false,
                allowGaps: body.allowGaps ?? false,
                includeSecrets: inc.has("secrets"),
                includeRoles: inc.has("roles"),
                includePods: inc.has("pods"),
                includeJobs: inc.has("jobs"),
                includePV: inc.has("pv"),
                includeWebhooks: inc.has("webhooks"),
                includeCRDs: inc.has("crds"),
              },
            });
            return { status: 201, json: { data: plan, warnings: plan.warnings } };
          } catch (err) {
            return refusal(err);
          } finally {
            view.close();
          }
        });
      },
    }),
    route({
      method: "POST",
      path: "/v1/replay-plans/{id}/dry-run",
      summary: "Dry-run a plan against this cluster: a verdict per object",
      description: "Needs replayplans update (it writes the ReplayPlan's status.dryRun).",
      tag: "replay",
      action: { resource: "replayplans", verb: "update" },
      params: planId,
      body: z.strictObject({ concurrency: z.number().int().min(1).max(64).optional() }).optional(),
      response: z.object({ data: anyJson, warnings: z.array(z.string()) }),
      handle: async ({ params, body, app }) =>
        withStore(app.journalPath, false, async store => {
          mustExist(store, params.id);
          const target = await targetOf(deps);
          try {
            const { dryRun, statusProblems } = await dryRunStored(store, target, params.id, {
              concurrency: body?.concurrency,
            });
            return { json: { data: dryRun, warnings: statusProblems } };
          } catch (err) {
            return refusal(err);
          }
        }),
    }),
    route({
      method: "POST",
      path: "/v1/replay-runs",
      summary: "Apply an approved, dry-run-ok plan to this cluster",
      description:
        "Needs the verb apply on replayplans. Refused (422) unless the plan's last dry run is ok for its " +
        "digest, every ReplayPlan part is approved and unexpired, this is the plan's target, and confirm is true.",
      tag: "replay",
      action: { resource: "replayplans", verb: "apply" },
      body: z.strictObject({ plan: planId.shape.id, confirm: z.boolean() }),
      response: z.object({ data: anyJson, warnings: z.array(z.string()) }),
      handle: async ({ body, app }) =>
        withStore(app.journalPath, false, async store => {
          mustExist(store, body.plan);
          const target = await targetOf(deps);
          try {
            const { run, statusProblems } = await applyStored(store, target, body.plan, {
              confirm: body.confirm,
            });
            return { status: 201, json: { data: run, warnings: statusProblems } };
          } catch (err) {
            return refusal(err);
          }
        }),
    }),
  ];
}
