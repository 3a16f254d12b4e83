import { z } from "zod";
import type { StreamKey } from "../event";
import {
  collectionPath,
  findResource,
  preferredVersionOf,
  type ApiResource,
} from "../kube/discovery";
import type { StreamSpec } from "./types";

/**
 * What to record: resources (kubectl names, "*.group" or "*"), namespaces and a label selector. The
 * environment's KRPLY_RESOURCES, KRPLY_NAMESPACES and KRPLY_SELECTOR are parsed in src/config.ts.
 */
export interface Selection {
  resources: string[];
  namespaces: string[];
  selector: string;
}

/** True when a selection entry names this resource. */
export function selects(entry: string, r: ApiResource): boolean {
  const e = entry.trim().toLowerCase();
  if (e === "*") return true;
  if (e.startsWith("*.")) return r.group === e.slice(2);
  return findResource(e, [r]) !== undefined;
}

/** The streams of one resource: one per namespace, or one for all namespaces / cluster scope. */
export function specsFor(r: ApiResource, sel: Selection, clusterId: string): StreamSpec[] {
  const namespaces = r.namespaced && sel.namespaces.length > 0 ? sel.namespaces : [""];
  return namespaces.map(namespace => {
    const key: StreamKey = {
      clusterId,
      group: r.group,
      version: r.version,
      resource: r.plural,
      namespace,
      selector: sel.selector,
    };
    return { key, kind: r.kind, path: collectionPath(r, namespace) };
  });
}

/** Resolves a selection against discovery; names that match nothing yet (a CRD to come) are returned. */
export function planStreams(
  sel: Selection,
  discovered: readonly ApiResource[],
  clusterId: string,
): { specs: StreamSpec[]; unresolved: string[] } {
  const chosen = new Map<string, ApiResource>();
  const unresolved: string[] = [];
  for (const entry of sel.resources) {
    const e = entry.trim().toLowerCase();
    const watchable = discovered.filter(r => r.verbs.includes("list") && r.verbs.includes("watch"));
    const hits =
      e === "*" || e.startsWith("*.")
        ? watchable.filter(r => selects(e, r))
        : [findResource(e, watchable)].filter((r): r is ApiResource => r !== undefined);
    if (hits.length === 0) unresolved.push(entry);
    for (const r of hits) chosen.set(`${r.group}/${r.plural}`, r);
  }
  const specs = [...chosen.values()].flatMap(r => specsFor(r, sel, clusterId));
  return { specs, unresolved };
}

const CrdSchema = z.looseObject({
  metadata: z.looseObject({ name: z.string() }),
  spec: z.looseObject({
    group: z.string(),
    scope: z.enum(["Namespaced", "Cluster"]),
    names: z.looseObject({
      plural: z.string(),
      kind: z.string(),
      singular: z.string().optional(),
      shortNames: z.array(z.string()).optional(),
    }),
    versions: z.array(
      z.looseObject({ name: z.string(), served: z.boolean(), storage: z.boolean() }),
    ),
  }),
  status: z
    .looseObject({
      // A CRD read right after creation has `conditions: null` until the API server establishes it.
      conditions: z.array(z.looseObject({ type: z.string(), status: z.string() })).nullish(),
    })
    .nullish(),
});

/**
 * The resource a CRD serves, at the version discovery prefers (not its storage version: the two
 * may differ, and discovery starts the same streams at boot), and whether it is established yet.
 */
export function resourceOfCrd(raw: unknown): { resource: ApiResource; established: boolean } {
  const crd = CrdSchema.parse(raw);
  const served = crd.spec.versions.filter(v => v.served).map(v => v.name);
  const version = preferredVersionOf(served) ?? crd.spec.versions[0].name;
  const n = crd.spec.names;
  return {
    resource: {
      group: crd.spec.group,
      version,
      kind: n.kind,
      plural: n.plural,
      singular: n.singular || n.kind.toLowerCase(),
      namespaced: crd.spec.scope === "Namespaced",
      verbs: ["list", "watch", "get"],
      shortNames: n.shortNames ?? [],
    },
    established: (crd.status?.conditions ?? []).some(
      c => c.type === "Established" && c.status === "True",
    ),
  };
}
