import { parseStreamId } from "../event";
import type { MaterializedObject, StreamCoverage } from "../materialize";
import { planDigest } from "./digest";
import { clusterUidOf } from "./gate";
import { orderObjects, rankOf } from "./order";
import { exclusionReason, type Policy } from "./policy";
import { sanitize } from "./sanitize";
import { fieldManagerOf, PLAN_LABEL } from "./replay-plan-cr";
import { type Excluded, type Plan, type PlanObject, type Target } from "./types";

/** Everything a plan is made from; reading the journal is the caller's job (planFromJournal). */
export interface PlanInput {
  id: string;
  createdAt: string;
  sourceClusterId: string;
  at: string;
  snapshotId: string | null;
  sourceNamespaces: string[];
  target: Target;
  policy: Policy;
  /** Every object at the point (other namespaces are ignored). */
  objects: MaterializedObject[];
  /** Coverage of every stream of the source cluster at the point. */
  streams: StreamCoverage[];
  /** Set when retention pruned history before the point. */
  prunedBefore: string | null;
  /** Further facts about the history (e.g. late records of a stored snapshot). */
  warnings: string[];
}

/** The plan cannot be made honestly: coverage is incomplete and allowGaps is not set. */
export class PlanRefused extends Error {
  constructor(
    message: string,
    readonly problems: string[],
  ) {
    super(message);
    this.name = "PlanRefused";
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Every string inside a value, with its path, for the source-UID check. */
function* strings(v: unknown, path = ""): Generator<[string, string]> {
  if (typeof v === "string") yield [path, v];
  else if (Array.isArray(v)) for (const [i, x] of v.entries()) yield* strings(x, `${path}[${i}]`);
  else if (isRecord(v)) for (const [k, x] of Object.entries(v)) yield* strings(x, `${path}.${k}`);
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

/** Whether a string is, or contains, one of the UIDs (Kubernetes UIDs are UUIDs). */
function carriesUid(v: string, uids: ReadonlySet<string>): boolean {
  if (uids.has(v)) return true;
  for (const m of v.matchAll(UUID)) if (uids.has(m[0])) return true;
  return false;
}

const apiVersionOf = (o: MaterializedObject): string => {
  const av = o.object.apiVersion;
  return typeof av === "string" ? av : "";
};

function streamKeyOf(streamId: string): ReturnType<typeof parseStreamId> | null {
  try {
    return parseStreamId(streamId);
  } catch {
    return null;
  }
}

/** Streams that hold a source namespace's objects (cluster-wide streams hold every namespace). */
function relevantStreams(streams: StreamCoverage[], sources: string[]): StreamCoverage[] {
  return streams.filter(s => {
    try {
      const ns = parseStreamId(s.streamId).namespace;
      return ns === "" || sources.includes(ns);
    } catch {
      return true;
    }
  });
}

/** Is this object one the plan considers: inside a source namespace, its Namespace, or a CRD? */
function inScope(o: MaterializedObject, sources: string[]): boolean {
  if (o.namespace) return sources.includes(o.namespace);
  if (o.kind === "Namespace" && o.group === "") return sources.includes(o.name);
  return o.kind === "CustomResourceDefinition";
}

/**
 * Builds a replay plan from the objects at a point. Pure: data in, data out. It refuses incomplete
 * coverage unless the policy allows gaps (then every object of an affected stream says so), leaves
 * out what the policy excludes with a reason, sanitizes, maps namespaces and names, labels every
 * object with the plan and orders them by dependency.
 */
export function buildPlan(input: PlanInput): Plan {
  const { policy, sourceNamespaces: sources } = input;
  if (sources.length === 0) throw new Error("a plan needs at least one source namespace");
  const nsMap: Record<string, string> = {};
  for (const s of sources) nsMap[s] = policy.namespaceMap[s] ?? s;
  const targetNamespaces = [...new Set(Object.values(nsMap))].sort();
  const warnings = [...input.warnings];

  const sameCluster = clusterUidOf(input.target.clusterId) === clusterUidOf(input.sourceClusterId);
  if (sameCluster && !input.target.isSource) {
    throw new PlanRefused(
      "the target is the source cluster; name it explicitly (target isSource) to replay into it",
      [],
    );
  }
  if (sameCluster) {
    const overlap = sources.filter(s => nsMap[s] === s);
    if (overlap.length > 0)
      warnings.push(
        `the plan writes into the source cluster's own namespaces (${overlap.join(", ")}): live objects there will be changed`,
      );
  }

  // Coverage: the point must be fully known for every stream that holds the source namespaces.
  const streams = relevantStreams(input.streams, sources);
  const incomplete = streams.filter(s => !s.complete);
  const problems = incomplete.flatMap(s => s.reasons.map(r => `${s.streamId}: ${r}`));
  if (input.prunedBefore)
    problems.push(
      `history before ${input.prunedBefore} was pruned; objects at ${input.at} cannot all be rebuilt`,
    );
  if (streams.length === 0) problems.push(`no recorded stream covers ${sources.join(", ")}`);
  if (problems.length > 0 && !policy.allowGaps) {
    throw new PlanRefused(
      `coverage at ${input.at} is incomplete; the plan would replay a guess (set allowGaps to plan anyway, with warnings):\n  ${problems.join("\n  ")}`,
      problems,
    );
  }
  warnings.push(...problems);
  const streamProblems = new Map(incomplete.map(s => [s.streamId, s.reasons]));

  if (policy.includeSecrets)
    warnings.push(
      "includeSecrets is set, but Secrets are never replayed from the journal: their values were redacted when recorded",
    );

  const scoped = input.objects.filter(o => inScope(o, sources));
  const sourceUids = new Set(
    scoped
      .map(o => (isRecord(o.object.metadata) ? o.object.metadata.uid : undefined))
      .filter((u): u is string => typeof u === "string" && u.length > 0),
  );
  // Custom kinds of the plan, to keep only the CRDs that define them.
  const customKinds = new Set(scoped.filter(o => o.namespace).map(o => `${o.group}/${o.kind}`));

  const excluded: Excluded[] = [];
  const kept: PlanObject[] = [];
  for (const o of scoped) {
    const exclude = (reason: string) =>
      excluded.push({ group: o.group, kind: o.kind, namespace: o.namespace, name: o.name, reason });
    if (o.kind === "CustomResourceDefinition") {
      const spec = isRecord(o.object.spec) ? o.object.spec : {};
      const names = isRecord(spec.names) ? spec.names : {};
      if (!customKinds.has(`${String(spec.group)}/${String(names.kind)}`)) continue;
    }
    const why = exclusionReason(o, policy);
    if (why) {
      exclude(why);
      continue;
    }
    const objWarnings: string[] = [];
    const stale = streamProblems.get(o.provenance.streamId);
    if (stale)
      objWarnings.push(`its stream's coverage is incomplete at ${input.at}: ${stale.join("; ")}`);

    const manifest = sanitize(o.object, policy);
    const md = isRecord(manifest.metadata) ? manifest.metadata : (manifest.metadata = {});
    const isNamespace = o.kind === "Namespace" && o.group === "";
    const targetNs = o.namespace ? nsMap[o.namespace] : "";
    let name = o.name;
    if (isNamespace) name = nsMap[o.name];
    const renamed = policy.nameMap[`${o.kind}/${o.namespace}/${o.name}`];
    if (renamed && !isNamespace) {
      name = renamed;
      objWarnings.push(`renamed from ${o.name}; references to it by name are not rewritten`);
    }
    md.name = name;
    if (o.namespace) md.namespace = targetNs;
    else delete md.namespace;
    if (isNamespace && isRecord(md.labels) && "kubernetes.io/metadata.name" in md.labels) {
      // The API server keeps this label equal to the namespace's name.
      md.labels["kubernetes.io/metadata.name"] = name;
    }
    md.labels = { ...(isRecord(md.labels) ? md.labels : {}), [PLAN_LABEL]: input.id };
    if (Array.isArray(md.ownerReferences) && md.ownerReferences.length > 0)
      objWarnings.push(
        "owner references are kept; each owner's UID is looked up in the target when sent",
      );

    const carried = [...strings(manifest)].find(([, v]) => carriesUid(v, sourceUids));
    if (carried) {
      exclude(`it would carry a source UID at ${carried[0]}; UIDs belong to the source cluster`);
      continue;
    }
    // Listed objects carry no apiVersion or kind, so both come from the stream that recorded it.
    const stream = streamKeyOf(o.provenance.streamId);
    const fromObject = apiVersionOf(o);
    const version = stream?.version ?? fromObject.slice(fromObject.indexOf("/") + 1);
    const { apiVersion: _a, kind: _k, ...rest } = manifest;
    const withType: Record<string, unknown> = {
      apiVersion: o.group ? `${o.group}/${version}` : version,
      kind: o.kind,
      ...rest,
    };
    kept.push({
      ref: {
        group: o.group,
        version,
        kind: o.kind,
        resource: stream?.resource ?? "",
        namespace: targetNs,
        name,
      },
      source: {
        namespace: o.namespace,
        name: o.name,
        resourceVersion: o.provenance.resourceVersion,
      },
      rank: rankOf(o),
      manifest: withType,
      warnings: objWarnings,
    });
  }
  const ordered = orderObjects(kept.map(p => ({ ...p.ref, manifest: p.manifest, plan: p }))).map(
    x => x.plan,
  );

  const body: Omit<Plan, "digest"> = {
    id: input.id,
    createdAt: input.createdAt,
    fieldManager: fieldManagerOf(input.id),
    source: {
      clusterId: input.sourceClusterId,
      at: input.at,
      snapshotId: input.snapshotId,
      namespaces: [...sources].sort(),
    },
    target: input.target,
    namespaceMap: nsMap,
    targetNamespaces,
    policy: { ...policy },
    coverageComplete: problems.length === 0,
    objects: ordered,
    excluded: excluded.sort(
      (a, b) =>
        a.kind.localeCompare(b.kind) ||
        a.namespace.localeCompare(b.namespace) ||
        a.name.localeCompare(b.name),
    ),
    warnings,
  };
  return { ...body, digest: planDigest(body) };
}
