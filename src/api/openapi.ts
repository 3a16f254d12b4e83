import { z } from "zod";
import type { Route } from "./route";

const ErrorSchema = z.object({
  error: z.object({
    status: z.number().int(),
    code: z.string(),
    message: z.string(),
    fields: z.array(
      z.object({
        in: z.enum(["path", "query", "body", "header"]),
        path: z.string(),
        message: z.string(),
      }),
    ),
  }),
});

function jsonSchema(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  const s = z.toJSONSchema(schema, { io, unrepresentable: "any", target: "openapi-3.0" }) as Record<
    string,
    unknown
  >;
  delete s.$schema;
  return s;
}

function parameters(where: "path" | "query", schema: z.ZodType | undefined) {
  if (!schema) return [];
  const s = jsonSchema(schema, "input") as {
    properties?: Record<string, Record<string, unknown>>;
    required?: string[];
  };
  return Object.entries(s.properties ?? {}).map(([name, prop]) => {
    const { description, ...rest } = prop;
    return {
      name,
      in: where,
      required: where === "path" || (s.required ?? []).includes(name),
      ...(description ? { description } : {}),
      schema: rest,
    };
  });
}

/** The OpenAPI 3 document of the given routes, generated from their zod schemas. */
export function openApiDocument(routes: readonly Route[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const op: Record<string, unknown> = {
      summary: r.summary,
      ...(r.description ? { description: r.description } : {}),
      tags: [r.tag],
      operationId: `${r.method.toLowerCase()}${r.path.replace(/[{}]/g, "").replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ""))}`,
      parameters: [...parameters("path", r.params), ...parameters("query", r.query)],
      responses: {
        "200":
          "contentType" in r.response
            ? {
                description: r.response.description,
                content: { [r.response.contentType]: { schema: { type: "string" } } },
              }
            : {
                description: "OK",
                content: { "application/json": { schema: jsonSchema(r.response, "output") } },
              },
        default: {
          description: "Any error: one JSON shape, with an entry per bad field",
          content: { "application/json": { schema: jsonSchema(ErrorSchema, "output") } },
        },
      },
      ...(r.action ? { security: [{ bearer: [] }], "x-krply-action": r.action } : {}),
    };
    if (r.body) {
      op.requestBody = {
        required: false,
        content: { "application/json": { schema: jsonSchema(r.body, "input") } },
      };
    }
    (paths[r.path] ??= {})[r.method.toLowerCase()] = op;
  }
  return {
    openapi: "3.0.3",
    info: {
      title: "krply query sidecar",
      version: "1",
      description:
        "Gap-aware history of Kubernetes objects. Every historical answer is { data, coverage, warnings }.",
    },
    components: { securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
    paths,
  };
}
