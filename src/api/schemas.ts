// Input schemas shared by the routes. Query values arrive as strings, so each schema parses text.
import { z } from "zod";
import { RECORD_TYPES } from "../event";

const RecordTypeSchema = z.enum(RECORD_TYPES);

/** A name as Kubernetes allows (object names, namespaces, kinds), bounded and printable. */
export const nameText = (what: string) =>
  z
    .string()
    .min(1, `${what} is empty`)
    .max(253, `${what} is longer than 253 characters`)
    .regex(/^[^\s\p{Cc}/]+$/u, `${what} must not contain spaces, slashes or control characters`);

/** Printable text of bounded length (label selectors, field paths, snapshot names). */
export const text = (what: string, max = 1024) =>
  z
    .string()
    .max(max, `${what} is longer than ${max} characters`)
    .regex(/^\P{Cc}*$/u, `${what} must not contain control characters`);

const MIN_TIME = Date.UTC(1970, 0, 1);
const MAX_TIME = Date.UTC(9999, 11, 31, 23, 59, 59);

/** An ISO 8601 time (with a zone, or UTC), normalized to ISO in UTC. */
export const isoTime = (what: string) =>
  z
    .string()
    .trim()
    .regex(
      /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/,
      `${what} must be an ISO 8601 time, e.g. 2026-01-01T12:00:00Z`,
    )
    .transform((v, ctx) => {
      const ms = Date.parse(v);
      if (Number.isNaN(ms) || ms < MIN_TIME || ms > MAX_TIME) {
        ctx.addIssue({
          code: "custom",
          message: `${what} is not a valid time between 1970 and 9999`,
        });
        return z.NEVER;
      }
      return new Date(ms).toISOString();
    });

/** "true" or "false". */
export const flag = (fallback: boolean) =>
  z
    .enum(["true", "false"], { error: "must be true or false" })
    .transform(v => v === "true")
    .optional()
    .transform(v => v ?? fallback);

/** A whole number written as decimal digits, in [min, max]. */
export const wholeNumber = (min: number, max: number, fallback: number) =>
  z
    .string()
    .regex(/^\d{1,9}$/, "must be a whole number")
    .transform(Number)
    .pipe(z.number().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`))
    .optional()
    .transform(v => v ?? fallback);

/** Record types as a comma-separated list (types=event,gap). */
export const recordTypes = z
  .string()
  .transform(v =>
    v
      .split(",")
      .map(s => s.trim())
      .filter(s => s !== ""),
  )
  .pipe(
    z
      .array(RecordTypeSchema, {
        error: `each type must be one of ${RecordTypeSchema.options.join(", ")}`,
      })
      .min(1, "name at least one type"),
  );

export const cluster = nameText("cluster")
  .optional()
  .describe("Cluster id; default: the only cluster in the journal.");
export const namespace = z
  .union([z.literal(""), nameText("namespace")])
  .optional()
  .describe("Namespace; empty or left out for cluster-scoped objects.");

/** An object by kind and name, from the path. */
export const RefParams = z.strictObject({
  kind: nameText("kind").describe("Kind as kubectl takes it: deploy, deployment, Deployment."),
  name: nameText("name"),
});

/** The query part every object route shares. */
export const refQuery = {
  cluster,
  namespace,
  group: z
    .union([z.literal(""), nameText("group")])
    .optional()
    .describe("API group, when the kind exists in several."),
};

/** Filters of events and export. */
export const eventFilters = {
  cluster,
  stream: text("stream", 2048)
    .min(1)
    .optional()
    .describe("Stream id, as GET /v1/streams lists it."),
  kind: nameText("kind").optional(),
  namespace,
  name: nameText("name").optional(),
  since: isoTime("since").optional().describe("Records observed at or after this time."),
  until: isoTime("until").optional().describe("Records observed at or before this time."),
  types: recordTypes
    .optional()
    .describe(`Comma-separated record types: ${RecordTypeSchema.options.join(", ")}.`),
};

/** The JSON schema side of an Answer<T>, for the OpenAPI document. */
export const AnswerOf = <T extends z.ZodType>(data: T) =>
  z.object({
    data,
    coverage: z
      .object({
        complete: z.boolean(),
        gaps: z.array(
          z.object({
            streamId: z.string(),
            from: z.string(),
            to: z.string().nullable(),
            reason: z.string(),
          }),
        ),
        prunedBefore: z.string().nullable(),
      })
      .loose(),
    warnings: z.array(z.string()),
  });

/** Data the OpenAPI document describes only loosely (records, objects): any JSON. */
export const anyJson = z.unknown();
