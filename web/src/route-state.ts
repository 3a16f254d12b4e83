// The UI's whole state lives in the URL's hash (#/<view>?<params>), so every view can be deep-linked,
// bookmarked and reloaded. Hash routing keeps the sidecar's static serving to one index.html.

export const VIEWS = [
  "coverage",
  "streams",
  "timeline",
  "diff",
  "snapshots",
  "search",
  "replay",
] as const;
export type ViewName = (typeof VIEWS)[number];

export const VIEW_TITLES: Readonly<Record<ViewName, string>> = {
  coverage: "Coverage",
  streams: "Stream health",
  timeline: "Timeline",
  diff: "Diff",
  snapshots: "Snapshots",
  search: "Search",
  replay: "Replay",
};

export type Params = Readonly<Record<string, string>>;

export interface RouteState {
  view: ViewName;
  params: Params;
  /** The hash named a view that does not exist; the UI says so instead of guessing. */
  unknown: string | null;
}

function isView(v: string): v is ViewName {
  return (VIEWS as readonly string[]).includes(v);
}

/** Reads a location hash ("#/timeline?kind=cm&name=a"); an empty hash is the Coverage view. */
export function parseHash(hash: string): RouteState {
  const raw = hash.replace(/^#/, "").replace(/^\//, "");
  const q = raw.indexOf("?");
  const name = decodeURIComponent(q < 0 ? raw : raw.slice(0, q)).replace(/\/+$/, "");
  const params: Record<string, string> = {};
  if (q >= 0) {
    for (const [k, v] of new URLSearchParams(raw.slice(q + 1))) if (v !== "") params[k] = v;
  }
  if (name === "") return { view: "coverage", params, unknown: null };
  if (!isView(name)) return { view: "coverage", params: {}, unknown: name };
  return { view: name, params, unknown: null };
}

/** The hash of a view with its parameters; empty and undefined values are left out, keys sorted. */
export function hrefOf(view: ViewName, params: Record<string, string | undefined | null> = {}) {
  const q = new URLSearchParams();
  for (const k of Object.keys(params).sort()) {
    const v = params[k];
    if (v !== undefined && v !== null && v !== "") q.set(k, v);
  }
  const s = q.toString();
  return `#/${view}${s ? `?${s}` : ""}`;
}

/** The same view with some parameters changed (null or "" removes one). */
export function withParams(
  state: Pick<RouteState, "view" | "params">,
  changes: Record<string, string | undefined | null>,
): string {
  return hrefOf(state.view, { ...state.params, ...changes });
}

/** An object as the object routes name it. */
export interface ObjectRef {
  cluster?: string;
  kind: string;
  name: string;
  namespace: string;
  group?: string;
}

/** The object named by a view's parameters (kind, name, ns, group, cluster), or null. */
export function refOf(p: Params): ObjectRef | null {
  if (!p.kind || !p.name) return null;
  return {
    kind: p.kind,
    name: p.name,
    namespace: p.ns ?? "",
    ...(p.cluster ? { cluster: p.cluster } : {}),
    ...(p.group ? { group: p.group } : {}),
  };
}

/** The view parameters that name an object (the inverse of refOf). */
export function refParams(r: ObjectRef): Record<string, string | undefined> {
  return {
    cluster: r.cluster,
    kind: r.kind,
    name: r.name,
    ns: r.namespace || undefined,
    group: r.group || undefined,
  };
}

/** The query string of the object routes for a ref (namespace, group, cluster). */
export function refQuery(r: ObjectRef): Record<string, string | undefined> {
  return { cluster: r.cluster, namespace: r.namespace || undefined, group: r.group || undefined };
}

/** A point of an object's history as the API takes it: rv:<RV> or an ISO time. */
export function pointLabel(point: string): string {
  return point.startsWith("rv:") ? `resourceVersion ${point.slice(3)}` : `observed by ${point}`;
}
