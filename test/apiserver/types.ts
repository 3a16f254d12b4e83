import { readFileSync } from "node:fs";
import { z } from "zod";

/** The four static-token users the harness creates, with the rights described in docs/apiserver-harness.md. */
export const apiServerUsers = ["admin", "recorder", "replayer", "nobody"] as const;

/** A user name from apiServerUsers. */
export type ApiServerUser = (typeof apiServerUsers)[number];

const perUser = z.object({
  admin: z.string(),
  recorder: z.string(),
  replayer: z.string(),
  nobody: z.string(),
});

// Mirrors readyInfo in main.go: the one JSON line the Go program prints when ready.
const apiServerInfoSchema = z.object({
  server: z.string(),
  apiserverPort: z.number().int(),
  etcdPort: z.number().int(),
  etcdPeerPort: z.number().int(),
  controlPort: z.number().int(),
  controlUrl: z.string(),
  egressProxyPort: z.number().int(),
  caFile: z.string(),
  kubeconfigs: perUser,
  tokens: perUser,
  auditLogPath: z.string(),
  dataDir: z.string(),
  pid: z.number().int(),
  startupMillis: z.number(),
});

/** Everything a test needs to reach a running harness, also readable from other processes via a JSON file. */
export type ApiServerInfo = z.infer<typeof apiServerInfoSchema>;

/** The part of ApiServerInfo needed to make authenticated requests. */
export type ApiServerConnection = Pick<ApiServerInfo, "server" | "caFile" | "tokens">;

/** Validates the ready line (or info.json) so a Go/TS mismatch fails loudly rather than as undefined fields. */
export function parseApiServerInfo(text: string): ApiServerInfo {
  return apiServerInfoSchema.parse(JSON.parse(text));
}

/** Reads and validates an info.json written by the Go program or by the jest global setup. */
export function readApiServerInfo(path: string): ApiServerInfo {
  return parseApiServerInfo(readFileSync(path, "utf8"));
}
