import { z } from "zod";
import { WATCH_TYPES, type KubeObject } from "../event";
import { StatusSchema, type Status } from "../kube/errors";
import { parseJsonText } from "../kube/json";

/** One line of a watch stream, as the API server sends it. */
const WatchEventSchema = z.object({ type: z.enum(WATCH_TYPES), object: z.looseObject({}) });

const ObjectWithRvSchema = z.looseObject({
  metadata: z.looseObject({
    name: z.string().min(1),
    resourceVersion: z.string().min(1),
  }),
});

const BookmarkSchema = z.looseObject({
  metadata: z.looseObject({ resourceVersion: z.string().min(1) }),
});

/** One parsed watch line. */
export type ParsedLine =
  | { type: "ADDED" | "MODIFIED" | "DELETED"; object: KubeObject; resourceVersion: string }
  | { type: "BOOKMARK"; resourceVersion: string }
  | { type: "ERROR"; status: Status }
  | { type: "malformed"; error: string };

/**
 * Where a schema refused the input: paths and codes only. A message may quote the input, and a watch
 * line can carry a Secret.
 */
export function issuesOf(error: z.ZodError): string {
  return error.issues.map(i => `${i.path.join(".") || "(root)"}: ${i.code}`).join("; ");
}

/** Parses and validates one line of a watch response; never throws. */
export function parseWatchLine(line: string): ParsedLine {
  let raw: unknown;
  try {
    raw = parseJsonText(line, "the line");
  } catch (err) {
    return { type: "malformed", error: (err as Error).message };
  }
  const ev = WatchEventSchema.safeParse(raw);
  if (!ev.success) return { type: "malformed", error: `not a watch event: ${issuesOf(ev.error)}` };
  const { type, object } = ev.data;
  if (type === "ERROR") {
    const st = StatusSchema.safeParse(object);
    if (!st.success) return { type: "malformed", error: "ERROR event without a Status" };
    return { type: "ERROR", status: st.data };
  }
  if (type === "BOOKMARK") {
    const b = BookmarkSchema.safeParse(object);
    if (!b.success) return { type: "malformed", error: "BOOKMARK without resourceVersion" };
    return { type, resourceVersion: b.data.metadata.resourceVersion };
  }
  const o = ObjectWithRvSchema.safeParse(object);
  if (!o.success) {
    return { type: "malformed", error: `${type} object lacks name or resourceVersion` };
  }
  return { type, object: o.data as KubeObject, resourceVersion: o.data.metadata.resourceVersion };
}

const ListSchema = z.looseObject({
  metadata: z.looseObject({
    resourceVersion: z.string().min(1),
    continue: z.string().optional(),
  }),
  items: z.array(z.looseObject({ metadata: z.looseObject({}) })).nullable(),
});

/** One page of a LIST. */
export interface ListPage {
  resourceVersion: string;
  continueToken: string;
  items: KubeObject[];
}

/** Validates a LIST answer. */
export function parseListPage(raw: unknown): ListPage {
  const parsed = ListSchema.safeParse(raw);
  if (!parsed.success) throw new Error(`not a list: ${issuesOf(parsed.error)}`);
  const l = parsed.data;
  return {
    resourceVersion: l.metadata.resourceVersion,
    continueToken: l.metadata.continue ?? "",
    items: (l.items ?? []) as KubeObject[],
  };
}
