import { z } from "zod";
import type { KubeClient } from "./client";
import { ALIASES } from "./aliases";
import { ApiError } from "./errors";

/** A resource the server serves, as discovery describes it. */
export interface ApiResource {
  group: string;
  version: string;
  kind: string;
  plural: string;
  singular: string;
  namespaced: boolean;
  verbs: string[];
  shortNames: string[];
}

// A file of its own, free of zod, so materialize (the CLI's reads) can name kinds without loading it.
export { ALIASES };

export { DefaultResources } from "./default-resources";

const ResourceListSchema = z.object({
  groupVersion: z.string(),
  resources: z.array(
    z.looseObject({
      name: z.string(),
      singularName: z.string().optional(),
      namespaced: z.boolean(),
      kind: z.string(),
      verbs: z.array(z.string()).optional(),
      shortNames: z.array(z.string()).optional(),
    }),
  ),
});

const GroupListSchema = z.object({
  groups: z.array(
    z.looseObject({
      name: z.string(),
      preferredVersion: z.object({ groupVersion: z.string(), version: z.string() }).optional(),
      versions: z.array(z.object({ groupVersion: z.string(), version: z.string() })),
    }),
  ),
});

/** Turns one APIResourceList into resources, dropping subresources such as pods/log. */
export function parseResourceList(raw: unknown): ApiResource[] {
  const list = ResourceListSchema.parse(raw);
  const slash = list.groupVersion.indexOf("/");
  const group = slash < 0 ? "" : list.groupVersion.slice(0, slash);
  const version = slash < 0 ? list.groupVersion : list.groupVersion.slice(slash + 1);
  return list.resources
    .filter(r => !r.name.includes("/"))
    .map(r => ({
      group,
      version,
      kind: r.kind,
      plural: r.name,
      singular: r.singularName || r.kind.toLowerCase(),
      namespaced: r.namespaced,
      verbs: r.verbs ?? [],
      shortNames: r.shortNames ?? [],
    }));
}

const KUBE_VERSION = /^v(\d+)(?:(alpha|beta)(\d+))?$/;
const STABILITY = { "": 3, beta: 2, alpha: 1 } as const;

/**
 * Kubernetes' version priority (apimachinery's CompareKubeAwareVersionStrings): GA before beta before
 * alpha, higher numbers first, and names that are not kube-like last, in alphabetical order.
 * Negative when a comes first.
 */
export function compareKubeAwareVersions(a: string, b: string): number {
  const x = KUBE_VERSION.exec(a);
  const y = KUBE_VERSION.exec(b);
  // Code-unit order as Go's strings.Compare, not localeCompare: its first call loads ICU's collator
  // (2 MiB and more of node's pages, resident in the recorder from then on).
  if (!x && !y) return a < b ? -1 : a > b ? 1 : 0;
  if (!x) return 1;
  if (!y) return -1;
  const sx = STABILITY[(x[2] ?? "") as keyof typeof STABILITY];
  const sy = STABILITY[(y[2] ?? "") as keyof typeof STABILITY];
  if (sx !== sy) return sy - sx;
  if (x[1] !== y[1]) return Number(y[1]) - Number(x[1]);
  return Number(y[3] ?? 0) - Number(x[3] ?? 0);
}

/**
 * The version a group's discovery prefers among the versions it serves: the first by Kubernetes'
 * version priority, which is how the API server picks a CRD group's preferredVersion. The one rule
 * for which version krply streams, whether it learns a resource from discovery or from its CRD.
 */
export function preferredVersionOf(served: readonly string[]): string | undefined {
  return [...served].sort(compareKubeAwareVersions)[0];
}

/** The preferred group versions from /apis, one per group, so no resource is streamed twice. */
export function preferredGroupVersions(raw: unknown): string[] {
  return GroupListSchema.parse(raw).groups.map(
    g => g.preferredVersion?.groupVersion ?? g.versions[0].groupVersion,
  );
}

export interface DiscoveryResult {
  resources: ApiResource[];
  /** Group versions that failed (an aggregated API down); their resources are unknown, not absent. */
  failed: { groupVersion: string; error: string }[];
}

/** Reads /api and /apis (preferred versions) into the list of resources the server serves. */
export async function serverResources(client: KubeClient): Promise<DiscoveryResult> {
  const core = await client.json<unknown>("/api/v1");
  const resources = parseResourceList(core);
  const failed: DiscoveryResult["failed"] = [];
  const gvs = preferredGroupVersions(await client.json<unknown>("/apis"));
  const lists = await Promise.all(
    gvs.map(async gv => {
      try {
        return parseResourceList(await client.json<unknown>(`/apis/${gv}`));
      } catch (err) {
        if (err instanceof ApiError && err.status >= 500) {
          failed.push({ groupVersion: gv, error: err.message });
          return [];
        }
        throw new Error(`discovery of ${gv} failed`, { cause: err });
      }
    }),
  );
  for (const l of lists) resources.push(...l);
  return { resources, failed };
}

/** Resolves kubectl-style names (alias, plural, singular, kind, plural.group) against discovery. */
export function resolveResource(arg: string, resources: readonly ApiResource[]): ApiResource {
  const found = findResource(arg, resources);
  if (found) return found;
  throw new Error(`the server does not serve a resource named "${arg}"`);
}

/** Like resolveResource, but returns undefined when nothing matches. */
export function findResource(
  arg: string,
  resources: readonly ApiResource[],
): ApiResource | undefined {
  const name = arg.trim().toLowerCase();
  const expanded = ALIASES[name] ?? name;
  const dot = expanded.indexOf(".");
  // "deployments.apps" or "deployments.v1.apps" name the group explicitly.
  const [base, group, version] =
    dot < 0 ? [expanded, undefined, undefined] : splitQualified(expanded, resources);
  const matches = resources.filter(
    r =>
      (group === undefined || r.group === group) &&
      (version === undefined || r.version === version) &&
      (r.plural === base ||
        r.singular === base ||
        r.kind.toLowerCase() === base ||
        r.shortNames.includes(base)),
  );
  if (matches.length === 0) return undefined;
  // The core group wins, like kubectl: "events" is core/v1 unless qualified.
  return matches.find(r => r.group === "") ?? matches[0];
}

function splitQualified(
  name: string,
  resources: readonly ApiResource[],
): [string, string | undefined, string | undefined] {
  const [base, ...rest] = name.split(".");
  const maybeVersion = rest[0];
  if (rest.length > 1 && resources.some(r => r.version === maybeVersion)) {
    return [base, rest.slice(1).join("."), maybeVersion];
  }
  return [base, rest.join("."), undefined];
}

/** The collection URL of a resource, optionally inside one namespace. */
export function collectionPath(r: ApiResource, namespace = ""): string {
  const prefix = r.group === "" ? `/api/${r.version}` : `/apis/${r.group}/${r.version}`;
  const ns = r.namespaced && namespace !== "" ? `/namespaces/${encodeURIComponent(namespace)}` : "";
  return `${prefix}${ns}/${r.plural}`;
}
