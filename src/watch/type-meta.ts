import type { KubeObject, StreamKey } from "../event";

/** The apiVersion a stream's objects carry: "v1" for the core group, "group/version" otherwise. */
export function apiVersionOf(key: Pick<StreamKey, "group" | "version">): string {
  return key.group === "" ? key.version : `${key.group}/${key.version}`;
}

/**
 * One shape for an object whichever way it arrived. A LIST leaves kind and apiVersion off its items
 * while watch events carry them, so without this the first change after every listing would show
 * both fields as changed. The stream's own version and kind win: it is what was asked for.
 */
export function withTypeMeta(object: KubeObject, apiVersion: string, kind: string): KubeObject {
  if (object.apiVersion === apiVersion && object.kind === kind) return object;
  const { apiVersion: _a, kind: _k, ...rest } = object;
  return { apiVersion, kind, ...rest } as KubeObject;
}
