import { z } from "zod";

/** Which object a plan entry is, in the target (after namespace and name mapping). */
export const PlanRefSchema = z.object({
  group: z.string(),
  version: z.string(),
  kind: z.string(),
  /** Plural resource name, from the stream that recorded the object. */
  resource: z.string(),
  namespace: z.string(),
  name: z.string(),
});
export type PlanRef = z.infer<typeof PlanRefSchema>;

/** One object the plan applies: its exact manifest, where it came from and what to watch out for. */
export const PlanObjectSchema = z.object({
  ref: PlanRefSchema,
  source: z.object({ namespace: z.string(), name: z.string(), resourceVersion: z.string() }),
  /** Dependency rank (0 = namespaces); objects are listed in apply order. */
  rank: z.number().int(),
  manifest: z.record(z.string(), z.unknown()),
  warnings: z.array(z.string()),
});
export type PlanObject = z.infer<typeof PlanObjectSchema>;

/** An object the policy left out, and why. */
export const ExcludedSchema = z.object({
  group: z.string(),
  kind: z.string(),
  namespace: z.string(),
  name: z.string(),
  reason: z.string(),
});
export type Excluded = z.infer<typeof ExcludedSchema>;

/** The cluster a plan applies to; `isSource` says the user named the source cluster on purpose. */
export const TargetSchema = z.object({
  clusterId: z.string().min(1),
  server: z.string().optional(),
  isSource: z.boolean(),
});
export type Target = z.infer<typeof TargetSchema>;

export const PlanSchema = z.object({
  id: z.string(),
  digest: z.string(),
  createdAt: z.string(),
  fieldManager: z.string(),
  source: z.object({
    clusterId: z.string(),
    at: z.string(),
    snapshotId: z.string().nullable(),
    namespaces: z.array(z.string()),
  }),
  target: TargetSchema,
  namespaceMap: z.record(z.string(), z.string()),
  targetNamespaces: z.array(z.string()),
  /** The flags the plan was made with, so a reader knows what was allowed. */
  policy: z.record(z.string(), z.unknown()),
  coverageComplete: z.boolean(),
  objects: z.array(PlanObjectSchema),
  excluded: z.array(ExcludedSchema),
  warnings: z.array(z.string()),
});
export type Plan = z.infer<typeof PlanSchema>;

export const VERDICTS = [
  "would-create",
  "would-change",
  "unchanged",
  "conflict",
  "rejected",
  "error",
] as const;
export type VerdictKind = (typeof VERDICTS)[number];

/** One field that would change in the live target. */
export const FieldDiffSchema = z.object({
  path: z.string(),
  before: z.unknown().optional(),
  after: z.unknown().optional(),
});

export const VerdictSchema = z.object({
  ref: PlanRefSchema,
  verdict: z.enum(VERDICTS),
  /** would-change: the fields that differ from the live object. */
  changes: z.array(FieldDiffSchema).optional(),
  /** conflict: each field another manager owns, as the server listed it. */
  conflicts: z
    .array(z.object({ manager: z.string(), field: z.string(), message: z.string() }))
    .optional(),
  /** rejected or error: the server's (or the client's) message. */
  message: z.string().optional(),
  /** Preflight findings: things likely to go wrong, checked before the request. */
  preflight: z.array(z.string()),
});
export type Verdict = z.infer<typeof VerdictSchema>;

export const DryRunSchema = z.object({
  planId: z.string(),
  digest: z.string(),
  at: z.string(),
  ok: z.boolean(),
  counts: z.record(z.string(), z.number()),
  verdicts: z.array(VerdictSchema),
});
export type DryRun = z.infer<typeof DryRunSchema>;

export const ApplyItemSchema = z.object({
  ref: PlanRefSchema,
  result: z.enum(["created", "configured", "unchanged", "failed", "not-applied"]),
  message: z.string().optional(),
});
export type ApplyItem = z.infer<typeof ApplyItemSchema>;

export const ApplyRunSchema = z.object({
  runId: z.string(),
  planId: z.string(),
  digest: z.string(),
  startedAt: z.string(),
  finishedAt: z.string(),
  ok: z.boolean(),
  applied: z.number().int(),
  notApplied: z.number().int(),
  items: z.array(ApplyItemSchema),
  message: z.string().optional(),
});
export type ApplyRun = z.infer<typeof ApplyRunSchema>;

/** kind namespace/name for messages. */
export function refText(r: Pick<PlanRef, "kind" | "namespace" | "name">): string {
  return `${r.kind} ${r.namespace ? `${r.namespace}/` : ""}${r.name}`;
}
