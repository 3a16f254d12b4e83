// A journal file and a running sidecar for the API's tests: the materializer's scripted history
// (a Deployment edited, ConfigMaps added and deleted) with a gap in the ConfigMap stream.
import {
  baselineRecords,
  eventRecord,
  gapRecord,
  type KubeObject,
  type StreamKey,
} from "../../src/event";
import { openJournal } from "../../src/journal";
import {
  DEFAULT_BACKGROUND,
  DEFAULT_OFFLOAD,
  SIDECAR_VIEW,
  noAuth,
  ROUTES,
  startApiServer,
  type ApiServer,
  type ApiServerOptions,
} from "../../src/api";
import { at, tempJournalPath } from "./journal-fixtures";
import { cm, cms, deploys, web } from "./materialize-fixtures";

/** Writes the scripted history with a gap (60 s) and the relist that closes it (70 s). */
export function scriptedJournalFile(): { path: string; cleanup(): void } {
  const tmp = tempJournalPath("krply-api-");
  const j = openJournal(tmp.path, { keyframeEvery: 3 });
  const append = (records: Parameters<typeof j.append>[0]["records"]) =>
    j.append({ records, checkpoints: [], streams: [deploys, cms] });
  const ev = (s: StreamKey, w: "ADDED" | "MODIFIED" | "DELETED", o: KubeObject, t: number) =>
    eventRecord({ stream: s, watchType: w, object: o, observedAt: at(t) });
  append([
    ...baselineRecords({
      stream: deploys,
      listResourceVersion: "10",
      listedAt: at(10),
      objects: [web(10, 3, 3)],
      kind: "Deployment",
    }),
    ...baselineRecords({
      stream: cms,
      listResourceVersion: "11",
      listedAt: at(10),
      objects: [cm("cfg", 11, { a: "1" })],
      kind: "ConfigMap",
    }),
  ]);
  append([ev(deploys, "MODIFIED", web(20, 5, 3, "2024-01-01T02:14:07Z"), 20)]);
  append([ev(deploys, "MODIFIED", web(30, 5, 5, "2024-01-01T02:14:07Z"), 30)]);
  append([ev(cms, "ADDED", cm("new", 40, {}), 40)]);
  append([ev(cms, "DELETED", cm("cfg", 50, { a: "1" }), 50)]);
  append([
    gapRecord({
      stream: cms,
      lastGoodResourceVersion: "50",
      reason: "410 Gone",
      detectedAt: at(60),
    }),
  ]);
  append(
    baselineRecords({
      stream: cms,
      listResourceVersion: "70",
      listedAt: at(70),
      objects: [cm("late", 69, {})],
      kind: "ConfigMap",
    }),
  );
  j.close();
  return tmp;
}

/** Options of a loopback sidecar without auth over a journal; tests override what they probe. */
export function testServerOptions(
  journalPath: string,
  over: Partial<ApiServerOptions> = {},
): ApiServerOptions {
  return {
    journalPath,
    host: "127.0.0.1",
    port: 0,
    authorizer: noAuth,
    corsOrigins: [],
    workers: 1,
    queryTimeoutMs: 20_000,
    maxQueue: 64,
    maxBodyBytes: 4096,
    busyTimeoutMs: 2000,
    shutdownGraceMs: 5000,
    routes: ROUTES,
    offload: DEFAULT_OFFLOAD,
    // As the sidecar runs: heavy queries on their own low-priority worker, views unmapped.
    background: DEFAULT_BACKGROUND,
    view: SIDECAR_VIEW,
    ...over,
  };
}

/** Fetches a path of a running sidecar; returns status, headers and parsed JSON (or text). */
export async function call(
  server: ApiServer,
  path: string,
  init: RequestInit = {},
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read answers of every shape
): Promise<{ status: number; headers: Headers; json: any; text: string }> {
  const res = await fetch(`${server.url}${path}`, init);
  const text = await res.text();
  let json: unknown = undefined;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, json, text };
}

export { startApiServer };
