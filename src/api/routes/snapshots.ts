// Stored snapshots, the objects of one, and taking a new one (the sidecar's one write).
import { z } from "zod";
import { READ, route } from "../route";
import { AnswerOf, anyJson, cluster, flag, isoTime, namespace, text } from "../schemas";

const Summary = z.object({
  id: z.string(),
  takenAt: z.string(),
  clusterId: z.string(),
  name: z.string(),
  at: z.string(),
  complete: z.boolean(),
  missing: z.array(z.string()),
  warnings: z.array(z.string()),
  objectCount: z.number(),
  watermarks: z.record(z.string(), z.string()),
});

export const snapshotRoutes = [
  route({
    method: "GET",
    path: "/v1/snapshots",
    summary: "Stored snapshots, oldest first",
    tag: "snapshots",
    action: READ,
    query: z.strictObject({ cluster }),
    response: AnswerOf(z.array(Summary)),
    handle: async ({ queries, query }) => ({ json: await queries.run("storedSnapshots", query) }),
  }),
  route({
    method: "GET",
    path: "/v1/snapshots/{id}",
    summary: "The objects of a stored snapshot, rebuilt from the journal at its time",
    tag: "snapshots",
    action: READ,
    params: z.strictObject({ id: text("id", 128).regex(/^[\w.:-]+$/, "is not a snapshot id") }),
    query: z.strictObject({ namespace }),
    response: AnswerOf(z.object({ snapshot: Summary, objects: z.array(anyJson) })),
    handle: async ({ queries, params, query }) => ({
      json: await queries.run("snapshotObjects", {
        id: params.id,
        namespace: query.namespace || undefined,
      }),
    }),
  }),
  route({
    method: "POST",
    path: "/v1/snapshots",
    summary: "Take a snapshot at a time (default now) and store its record",
    description:
      "Needs snapshots create. The snapshot is materialized in a worker; its SNAPSHOT record is appended " +
      "through a writer opened for that one append (busy_timeout waits out the recorder). " +
      "record=false only materializes it.",
    tag: "snapshots",
    action: { resource: "snapshots", verb: "create" },
    body: z.strictObject({
      cluster,
      at: isoTime("at").optional(),
      name: text("name", 253).min(1).optional(),
      objects: z
        .boolean()
        .optional()
        .describe("Include the objects in the answer (default false)."),
      record: z.boolean().optional().describe("Store the SNAPSHOT record (default true)."),
    }),
    query: z.strictObject({ dryRun: flag(false).describe("Same as record=false.") }),
    response: AnswerOf(
      z
        .object({
          id: z.string().nullable(),
          name: z.string(),
          at: z.string(),
          complete: z.boolean(),
          objects: z.array(anyJson),
        })
        .loose(),
    ),
    handle: async ({ queries, body, query }) => {
      const record = !query.dryRun && (body.record ?? true);
      const answer = await queries.run("takeSnapshot", {
        cluster: body.cluster,
        at: body.at,
        name: body.name,
        objects: body.objects ?? false,
        record,
      });
      return { status: record ? 201 : 200, json: answer };
    },
  }),
];
