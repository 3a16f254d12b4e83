import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { isIPv6 } from "node:net";
import { delimiter, dirname, isAbsolute, join } from "node:path";
import { parse } from "yaml";
import { z } from "zod";

/**
 * A kubeconfig reader that needs neither @kubernetes/client-node nor its generated API: importing
 * client-node costs about 75 MiB of resident memory, more than `krply record` needs for everything
 * else on a small cluster. It covers what a recorder meets: client certificates, bearer tokens, token
 * files (re-read, since service account tokens rotate), basic auth and the in-cluster service account.
 * A user with an exec plugin, an auth-provider or impersonation is handed to client-node instead
 * (`delegated`), which is loaded only then.
 */

const SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";
/** A token file is read again after this long, as client-go does. */
export const TOKEN_FILE_TTL_MS = 60_000;

const ClusterSchema = z.looseObject({
  server: z.string().min(1),
  "certificate-authority": z.string().nullish(),
  "certificate-authority-data": z.string().nullish(),
  "insecure-skip-tls-verify": z.boolean().nullish(),
  "tls-server-name": z.string().nullish(),
});
const UserSchema = z.looseObject({
  token: z.string().nullish(),
  tokenFile: z.string().nullish(),
  "token-file": z.string().nullish(),
  "client-certificate": z.string().nullish(),
  "client-certificate-data": z.string().nullish(),
  "client-key": z.string().nullish(),
  "client-key-data": z.string().nullish(),
  username: z.string().nullish(),
  password: z.string().nullish(),
  exec: z.unknown().optional(),
  "auth-provider": z.unknown().optional(),
  as: z.unknown().optional(),
});
const ContextSchema = z.looseObject({
  cluster: z.string().min(1),
  user: z.string().nullish(),
  namespace: z.string().nullish(),
});
const FileSchema = z.looseObject({
  clusters: z.array(z.object({ name: z.string().min(1), cluster: ClusterSchema })).nullish(),
  users: z.array(z.object({ name: z.string().min(1), user: UserSchema.nullish() })).nullish(),
  contexts: z.array(z.object({ name: z.string().min(1), context: ContextSchema })).nullish(),
  "current-context": z.string().nullish(),
});

export interface KubeCluster {
  name: string;
  server: string;
  skipTLSVerify: boolean;
  caData?: string;
  caFile?: string;
  tlsServerName?: string;
}

export interface KubeUser {
  name: string;
  token?: string;
  tokenFile?: string;
  certData?: string;
  certFile?: string;
  keyData?: string;
  keyFile?: string;
  username?: string;
  password?: string;
  /** An exec plugin, auth-provider or impersonation: client-node computes this user's auth. */
  delegated: boolean;
  /** The user's entry as the file has it, for client-node when delegated. */
  raw?: Record<string, unknown>;
}

export interface KubeContext {
  name: string;
  cluster: string;
  user: string;
  namespace?: string;
}

/** Where a config came from, so a delegated user can be loaded the same way by client-node. */
export type KubeConfigOrigin = { files: string[] } | { inCluster: true } | { fallback: true };

/** TLS material for the connection, read once. */
export interface KubeTls {
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
  rejectUnauthorized?: boolean;
  servername?: string;
}

const abs = (root: string, p: string | null | undefined): string | undefined =>
  p ? (isAbsolute(p) ? p : join(root, p)) : undefined;
const opt = <T>(v: T | null | undefined): T | undefined => v ?? undefined;

/** A kubeconfig: clusters, users and contexts, with one current context. */
export class KubeConfigFile {
  private tokenCache: { token: string; at: number } | null = null;

  constructor(
    readonly clusters: KubeCluster[],
    readonly users: KubeUser[],
    readonly contexts: KubeContext[],
    public currentContext: string,
    readonly origin: KubeConfigOrigin,
  ) {}

  /**
   * Reads and merges kubeconfig files as kubectl does: the first file that names a cluster, user or
   * context, or sets current-context, wins. Relative paths are relative to the file that holds them.
   */
  static fromFiles(files: string[]): KubeConfigFile {
    const clusters: KubeCluster[] = [];
    const users: KubeUser[] = [];
    const contexts: KubeContext[] = [];
    let current = "";
    for (const file of files) {
      let raw: unknown;
      try {
        raw = parse(readFileSync(file, "utf8"));
      } catch (err) {
        // The yaml library's message quotes the input, and a kubeconfig holds credentials.
        const why = (err as NodeJS.ErrnoException).code ?? "not YAML";
        throw new Error(`cannot read kubeconfig ${file}: ${why}`);
      }
      const parsed = FileSchema.safeParse(raw ?? {});
      if (!parsed.success) {
        const where = parsed.error.issues.map(i => i.path.join(".") || "(root)").join(", ");
        throw new Error(`kubeconfig ${file} is not valid at ${where}`);
      }
      const f = parsed.data;
      const root = dirname(file);
      for (const c of f.clusters ?? []) {
        if (clusters.some(x => x.name === c.name)) continue;
        clusters.push({
          name: c.name,
          server: c.cluster.server,
          skipTLSVerify: c.cluster["insecure-skip-tls-verify"] === true,
          caData: opt(c.cluster["certificate-authority-data"]),
          caFile: abs(root, c.cluster["certificate-authority"]),
          tlsServerName: opt(c.cluster["tls-server-name"]),
        });
      }
      for (const u of f.users ?? []) {
        if (users.some(x => x.name === u.name)) continue;
        const user = u.user ?? {};
        users.push({
          name: u.name,
          token: opt(user.token),
          tokenFile: abs(root, user.tokenFile ?? user["token-file"]),
          certData: opt(user["client-certificate-data"]),
          certFile: abs(root, user["client-certificate"]),
          keyData: opt(user["client-key-data"]),
          keyFile: abs(root, user["client-key"]),
          username: opt(user.username),
          password: opt(user.password),
          delegated: user.exec != null || user["auth-provider"] != null || user.as != null,
          raw: user,
        });
      }
      for (const c of f.contexts ?? []) {
        if (contexts.some(x => x.name === c.name)) continue;
        contexts.push({
          name: c.name,
          cluster: c.context.cluster,
          user: c.context.user ?? "",
          namespace: opt(c.context.namespace),
        });
      }
      current ||= f["current-context"] ?? "";
    }
    return new KubeConfigFile(clusters, users, contexts, current, { files });
  }

  /** The pod's service account, as every in-cluster client finds it. */
  static inCluster(env: NodeJS.ProcessEnv = process.env, dir = SA_DIR): KubeConfigFile {
    const host = env.KUBERNETES_SERVICE_HOST ?? "";
    const port = env.KUBERNETES_SERVICE_PORT ?? "443";
    const scheme = ["80", "8080", "8001"].includes(port) ? "http" : "https";
    const server = `${scheme}://${isIPv6(host) ? `[${host}]` : host}:${port}`;
    const nsFile = join(dir, "namespace");
    return new KubeConfigFile(
      [{ name: "inCluster", server, skipTLSVerify: false, caFile: join(dir, "ca.crt") }],
      [{ name: "inClusterUser", tokenFile: join(dir, "token"), delegated: false }],
      [
        {
          name: "inClusterContext",
          cluster: "inCluster",
          user: "inClusterUser",
          namespace: existsSync(nsFile) ? readFileSync(nsFile, "utf8").trim() : undefined,
        },
      ],
      "inClusterContext",
      { inCluster: true },
    );
  }

  /** $KUBECONFIG, then ~/.kube/config, then the in-cluster service account, then localhost:8080. */
  static fromDefault(env: NodeJS.ProcessEnv = process.env): KubeConfigFile {
    const list = (env.KUBECONFIG ?? "").split(delimiter).filter(Boolean);
    if (list.length > 0) return KubeConfigFile.fromFiles(list);
    const home = env.HOME || homedir();
    const file = home ? join(home, ".kube", "config") : "";
    if (file && existsSync(file)) return KubeConfigFile.fromFiles([file]);
    if (env.KUBERNETES_SERVICE_HOST) return KubeConfigFile.inCluster(env);
    return new KubeConfigFile(
      [{ name: "cluster", server: "http://localhost:8080", skipTLSVerify: false }],
      [{ name: "user", delegated: false }],
      [{ name: "loaded-context", cluster: "cluster", user: "user" }],
      "loaded-context",
      { fallback: true },
    );
  }

  getContexts(): KubeContext[] {
    return this.contexts;
  }

  setCurrentContext(name: string): void {
    this.currentContext = name;
  }

  /** The current context's name, as client-node's KubeConfig answers it. */
  getCurrentContext(): string {
    return this.currentContext;
  }

  /** The current context's entry. */
  currentContextEntry(): KubeContext | undefined {
    return this.contexts.find(c => c.name === this.currentContext);
  }

  getCurrentCluster(): KubeCluster | null {
    const ctx = this.currentContextEntry();
    return (ctx && this.clusters.find(c => c.name === ctx.cluster)) ?? null;
  }

  getCurrentUser(): KubeUser | null {
    const ctx = this.currentContextEntry();
    return (ctx && this.users.find(u => u.name === ctx.user)) ?? null;
  }

  /**
   * The current context as a kubeconfig document with absolute paths, for client-node to compute a
   * delegated user's auth from.
   */
  currentAsDocument(): Record<string, unknown> {
    const ctx = this.currentContextEntry();
    const c = this.getCurrentCluster();
    const u = this.getCurrentUser();
    const cluster: Record<string, unknown> = { server: c?.server ?? "" };
    if (c?.caData) cluster["certificate-authority-data"] = c.caData;
    if (c?.caFile) cluster["certificate-authority"] = c.caFile;
    if (c?.skipTLSVerify) cluster["insecure-skip-tls-verify"] = true;
    if (c?.tlsServerName) cluster["tls-server-name"] = c.tlsServerName;
    const user: Record<string, unknown> = { ...(u?.raw ?? {}) };
    for (const [k, v] of [
      ["client-certificate", u?.certFile],
      ["client-key", u?.keyFile],
      ["tokenFile", u?.tokenFile],
    ] as const) {
      if (v) user[k] = v;
    }
    return {
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: c?.name ?? "cluster", cluster }],
      users: [{ name: u?.name ?? "user", user }],
      contexts: [
        {
          name: this.currentContext,
          context: {
            cluster: c?.name ?? "cluster",
            user: u?.name ?? "user",
            namespace: ctx?.namespace,
          },
        },
      ],
      "current-context": this.currentContext,
    };
  }

  /** The TLS material of the current cluster and user; inline data wins over a file, as in client-go. */
  tls(): KubeTls {
    const cluster = this.getCurrentCluster();
    const user = this.getCurrentUser();
    const material = (data?: string, file?: string): Buffer | undefined =>
      data ? Buffer.from(data, "base64") : file ? readFileSync(file) : undefined;
    return {
      ca: material(cluster?.caData, cluster?.caFile),
      cert: material(user?.certData, user?.certFile),
      key: material(user?.keyData, user?.keyFile),
      rejectUnauthorized: cluster?.skipTLSVerify ? false : undefined,
      servername: cluster?.tlsServerName,
    };
  }

  /** The Authorization header of the current user (none for certificate auth). */
  authHeaders(now = Date.now()): Record<string, string> {
    const user = this.getCurrentUser();
    if (!user) return {};
    if (user.token) return { Authorization: `Bearer ${user.token}` };
    if (user.tokenFile) {
      if (!this.tokenCache || now - this.tokenCache.at > TOKEN_FILE_TTL_MS) {
        this.tokenCache = { token: readFileSync(user.tokenFile, "utf8").trim(), at: now };
      }
      return this.tokenCache.token ? { Authorization: `Bearer ${this.tokenCache.token}` } : {};
    }
    if (user.username) {
      const basic = Buffer.from(`${user.username}:${user.password ?? ""}`).toString("base64");
      return { Authorization: `Basic ${basic}` };
    }
    return {};
  }
}
