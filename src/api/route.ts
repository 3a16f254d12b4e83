// How a route is declared. Each route group is one file in ./routes exporting an array of routes;
// ./routes/index.ts lists the groups. A route names its method, path, the action it needs, a zod schema
// for each input (path params, query, body) and for its answer, and a handler that gets the parsed
// inputs. The server validates, authorizes, times and answers; the OpenAPI document comes from these.
import type { IncomingMessage } from "node:http";
import type { z } from "zod";
import type { Action, Principal } from "./authorizer";
import type { PageCache } from "./event-pages";
import type { QueryInput, QueryName, QueryOutput } from "./queries";

/**
 * A JSON answer already serialized, sent as it is: text, or UTF-8 pieces sent one after the other
 * (a pool worker's bytes; a cached page between its envelope's two halves, never copied into one).
 */
export class JsonText {
  constructor(readonly text: string | readonly Buffer[]) {}
}

/** What a handler answers: JSON (a value, or JsonText), or a stream of text chunks (NDJSON). */
export type Reply =
  | { status?: number; headers?: Record<string, string>; json: unknown }
  | {
      status?: number;
      headers?: Record<string, string>;
      contentType: string;
      /** Chunks are written with backpressure; the stream stops when the client goes away. */
      stream: AsyncIterable<string>;
    };

/** Runs a named query: on the main thread, or in the worker pool for the heavy ones. */
export interface QueryRunner {
  run<K extends QueryName>(name: K, input: QueryInput<K>): Promise<QueryOutput<K>>;
  /**
   * The query's answer as the reply's JSON, for routes that send it unchanged: from a worker it
   * arrives serialized (JsonText), so the event loop neither clones nor serializes it.
   */
  answer<K extends QueryName>(name: K, input: QueryInput<K>): Promise<JsonText | QueryOutput<K>>;
}

/** The server itself, for the routes that describe it. */
export interface AppInfo {
  /** Why the server is not ready (journal not open, workers down, shutting down); empty when ready. */
  notReady(): string[];
  metricsText(): Promise<{ contentType: string; text: string }>;
  openapi(): unknown;
  /** The journal file the server reads (routes that keep their own tables there open it too). */
  journalPath: string;
  /** Full events pages kept as JSON text; null when the cache is off. */
  eventPages: PageCache | null;
}

export interface RouteContext<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  principal: Principal;
  queries: QueryRunner;
  req: IncomingMessage;
  app: AppInfo;
  /** Aborted when the client disconnects. */
  signal: AbortSignal;
}

type Obj = z.ZodObject;

export interface RouteDef<P extends Obj, Q extends Obj, B extends z.ZodType> {
  method: "GET" | "POST";
  /** OpenAPI style: /v1/objects/{kind}/{name}/history. */
  path: string;
  summary: string;
  description?: string;
  tag: string;
  /** The action the caller needs; null for routes open to anyone (health, ready, metrics, openapi). */
  action: Action | null;
  params?: P;
  query?: Q;
  body?: B;
  /** The 200 answer, for the OpenAPI document; a stream route names its content type instead. */
  response: z.ZodType | { contentType: string; description: string };
  handle(ctx: RouteContext<z.output<P>, z.output<Q>, z.output<B>>): Promise<Reply> | Reply;
}

/** A route whose inputs are no longer tied to their schemas' types (what the server keeps). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Route = RouteDef<any, any, any>;

/** Declares a route; an identity that lets TypeScript infer the handler's input types. */
export function route<P extends Obj, Q extends Obj, B extends z.ZodType>(
  def: RouteDef<P, Q, B>,
): Route {
  return def as Route;
}

/** The read action every historical route needs. */
export const READ: Action = { resource: "journal", verb: "get" };
