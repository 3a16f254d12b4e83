// Approval status of a replay plan over HTTP: the approval itself is a Kubernetes write on the
// plan's ReplayPlan objects in the target (stamped by admission), so this route reads them there and
// says what an apply would find. The web UI's replay review shows it.
import { z } from "zod";
import { approvalOf, approvalProblem, loadPlan, readPlanParts } from "../../replay";
import { ApiError } from "../errors";
import { route, type Route } from "../route";
import { GET, mustExist, planId, targetOf, withStore, type ReplayDeps } from "./replay";

export function approvalRoute(deps: ReplayDeps): Route {
  return route({
    method: "GET",
    path: "/v1/replay-plans/{id}/approval",
    summary: "Whether the plan's ReplayPlan objects in this cluster approve its digest now",
    description:
      "Reads the ReplayPlan parts from the target (the approval is a Kubernetes write there) and says " +
      "whether the apply would find them approved, attested, unexpired and of this digest; 503 when the " +
      "cluster cannot be read.",
    tag: "replay",
    action: GET,
    params: planId,
    response: z.object({
      data: z.object({
        approved: z.boolean(),
        problem: z.string().nullable(),
        parts: z.array(
          z.object({
            name: z.string(),
            digest: z.string(),
            approved: z.boolean(),
            expired: z.boolean(),
            approvedBy: z.string().nullable(),
            approvedAt: z.string().nullable(),
            approvalExpiresAt: z.string().nullable(),
          }),
        ),
      }),
    }),
    handle: async ({ params, app }) => {
      const plan = await withStore(app.journalPath, true, store => {
        mustExist(store, params.id);
        return loadPlan(store, params.id);
      });
      const target = await targetOf(deps);
      let parts: Awaited<ReturnType<typeof readPlanParts>>;
      try {
        parts = await readPlanParts(target, params.id);
      } catch (err) {
        throw new ApiError("unavailable", "cannot read the plan's ReplayPlan objects", [], {
          cause: err,
        });
      }
      const now = new Date();
      const problem = approvalProblem(parts, plan, now);
      return {
        json: {
          data: {
            approved: problem === null,
            problem,
            parts: parts.map(p => {
              const a = approvalOf(p, now);
              return {
                name: p.metadata.name ?? plan.id,
                digest: p.spec.digest,
                approved: a.approved,
                expired: a.expired,
                approvedBy: p.spec.approvedBy ?? null,
                approvedAt: p.spec.approvedAt ?? null,
                approvalExpiresAt: p.spec.approvalExpiresAt ?? null,
              };
            }),
          },
        },
      };
    },
  });
}
