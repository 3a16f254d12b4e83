import { readFileSync } from "node:fs";
import { Agent, request } from "node:https";
import type { IncomingHttpHeaders, IncomingMessage } from "node:http";
import { createInterface } from "node:readline";
import type { ApiServerConnection, ApiServerUser } from "./types";

// node:https rather than fetch: the CA goes straight into the agent, and a watch body can be read line by line
// and destroyed without undici dispatcher plumbing inside jest workers.
const agents = new Map<string, Agent>();

function agentFor(caFile: string): Agent {
  let agent = agents.get(caFile);
  if (!agent) {
    agent = new Agent({ ca: readFileSync(caFile), keepAlive: true });
    agents.set(caFile, agent);
  }
  return agent;
}

/** A buffered Kubernetes API response. */
export interface KubeResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** The body parsed as JSON; throws with the raw text when it is not JSON. */
  json<T = KubeObject>(): T;
}

/** A loosely typed Kubernetes object or Status; tests narrow what they read. */
export type KubeObject = {
  kind?: string;
  apiVersion?: string;
  metadata?: {
    name?: string;
    namespace?: string;
    resourceVersion?: string;
    [key: string]: unknown;
  };
  [key: string]: unknown;
};

/** Request body: a string is sent as is, anything else as JSON. */
export type KubeBody = string | object | undefined;

function defaultContentType(method: string, body: KubeBody): string {
  if (typeof body === "string") return "application/apply-patch+yaml";
  return method === "PATCH" ? "application/merge-patch+json" : "application/json";
}

function open(
  info: ApiServerConnection,
  user: ApiServerUser,
  method: string,
  path: string,
  body: KubeBody,
  headers: Record<string, string>,
): Promise<IncomingMessage> {
  const url = new URL(path, info.server);
  const payload =
    body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body);
  const allHeaders: Record<string, string> = {
    Authorization: `Bearer ${info.tokens[user]}`,
    Accept: "application/json",
    ...(payload !== undefined ? { "Content-Type": defaultContentType(method, body) } : {}),
    ...headers,
  };
  return new Promise((resolveResponse, reject) => {
    const req = request(
      url,
      { method, headers: allHeaders, agent: agentFor(info.caFile) },
      resolveResponse,
    );
    req.on("error", reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

/**
 * One authenticated request as `user`. A string body defaults to application/apply-patch+yaml (server-side
 * apply), an object body to JSON (merge-patch for PATCH); pass Content-Type in headers to choose another.
 */
export async function kubeRequest(
  info: ApiServerConnection,
  user: ApiServerUser,
  method: string,
  path: string,
  body?: KubeBody,
  headers: Record<string, string> = {},
): Promise<KubeResponse> {
  const res = await open(info, user, method, path, body, headers);
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  return {
    status: res.statusCode ?? 0,
    headers: res.headers,
    text,
    json<T>(): T {
      try {
        return JSON.parse(text) as T;
      } catch {
        throw new Error(
          `${method} ${path}: expected JSON, got HTTP ${res.statusCode}: ${text.slice(0, 500)}`,
        );
      }
    },
  };
}

/** One decoded line of a watch stream. */
export interface WatchEvent {
  type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";
  object: KubeObject;
}

/** An open watch: `events` yields decoded lines until the server ends the stream or `close()` is called. */
export interface WatchStream {
  status: number;
  /** The whole body when the server refused the watch (status other than 200), otherwise empty. */
  text: string;
  events: AsyncIterable<WatchEvent>;
  close(): void;
}

/** Opens a watch (path must carry watch=1 and its query) and streams its events as they arrive. */
export async function watchLines(
  info: ApiServerConnection,
  user: ApiServerUser,
  path: string,
  headers: Record<string, string> = {},
): Promise<WatchStream> {
  const res = await open(info, user, "GET", path, undefined, headers);
  const status = res.statusCode ?? 0;
  const close = (): void => {
    res.destroy();
  };
  if (status !== 200) {
    const chunks: Buffer[] = [];
    for await (const chunk of res) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    return { status, text, events: (async function* () {})(), close };
  }
  async function* events(): AsyncGenerator<WatchEvent> {
    const lines = createInterface({ input: res, crlfDelay: Infinity });
    try {
      for await (const line of lines) {
        if (line.trim() !== "") yield JSON.parse(line) as WatchEvent;
      }
    } catch (err) {
      // close() destroys the socket mid-read; that ends the stream, it is not a failure.
      if (!res.destroyed) throw err;
    } finally {
      lines.close();
    }
  }
  return { status, text: "", events: events(), close };
}

/**
 * Collects watch events until `until` returns true, the stream ends, or `timeoutMs` passes, then closes the
 * watch; returns what was seen so a failed expectation shows the whole sequence.
 */
export async function collectEvents(
  stream: WatchStream,
  until: (seen: WatchEvent[]) => boolean,
  timeoutMs = 15000,
): Promise<WatchEvent[]> {
  const seen: WatchEvent[] = [];
  const timer = setTimeout(() => stream.close(), timeoutMs);
  try {
    for await (const event of stream.events) {
      seen.push(event);
      if (until(seen)) break;
    }
  } finally {
    clearTimeout(timer);
    stream.close();
  }
  return seen;
}
