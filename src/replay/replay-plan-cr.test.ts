import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import {
  MAX_REFS_PER_PART,
  PLAN_ID_LABEL,
  REPLAY_PLAN_STATES,
  ReplayPlanSchema,
  groupOf,
  partName,
  replayPlanParts,
  type ObjectRef,
} from "./replay-plan-cr";

interface OpenApi {
  properties: Record<string, OpenApi>;
  maxItems?: number;
  enum?: string[];
}

const crd = parse(
  readFileSync(join(__dirname, "..", "..", "deploy", "crds", "replayplan.yaml"), "utf8"),
) as {
  spec: {
    group: string;
    scope: string;
    names: { kind: string; plural: string };
    versions: {
      name: string;
      subresources: object;
      additionalPrinterColumns: { name: string; jsonPath: string }[];
      schema: { openAPIV3Schema: OpenApi };
    }[];
  };
};

const input = {
  planId: "p-1a2b",
  digest: `sha256:${"a".repeat(64)}`,
  source: { cluster: "127.0.0.1:6443~src-uid", namespaces: ["shop"] },
  target: { cluster: "127.0.0.1:6443~dst-uid", namespaces: ["replay-a"] },
};
const refs = (n: number): ObjectRef[] =>
  Array.from({ length: n }, (_, i) => ({
    apiVersion: "v1",
    kind: "ConfigMap",
    namespace: "replay-a",
    name: `cm-${i}`,
  }));

describe("the ReplayPlan CRD and its TypeScript type", () => {
  const version = crd.spec.versions[0];
  const props = version.schema.openAPIV3Schema.properties;

  it("is cluster-scoped krply.dev/v1alpha1 with a status subresource", () => {
    expect(crd.spec.group).toBe("krply.dev");
    expect(crd.spec.scope).toBe("Cluster");
    expect(crd.spec.names).toMatchObject({ kind: "ReplayPlan", plural: "replayplans" });
    expect(version.name).toBe("v1alpha1");
    expect(version.subresources).toEqual({ status: {} });
  });

  it("bounds the refs of a part and lists the states the type knows", () => {
    expect(props.spec.properties.objects.maxItems).toBe(MAX_REFS_PER_PART);
    expect(props.status.properties.state.enum).toEqual([...REPLAY_PLAN_STATES]);
  });

  it("shows the story in kubectl get: plan, state, target, counts, approver, expiry", () => {
    const columns = version.additionalPrinterColumns.map(c => c.name);
    for (const c of ["Plan", "State", "Target", "Objects", "Conflicts", "Approved-By", "Expires"]) {
      expect(columns).toContain(c);
    }
  });
});

describe("replayPlanParts", () => {
  it("keeps a small plan in one part named after the plan", () => {
    const [only, ...rest] = replayPlanParts({ ...input, objects: refs(3) });
    expect(rest).toHaveLength(0);
    expect(only.metadata.name).toBe("p-1a2b");
    expect(only.metadata.labels).toEqual({ [PLAN_ID_LABEL]: "p-1a2b" });
    expect(only.spec.part).toEqual({ index: 0, count: 1 });
    expect(only.spec.approved).toBe(false);
    expect(ReplayPlanSchema.parse(only)).toEqual(only);
  });

  it("splits a larger plan into parts with the same id and digest, in order", () => {
    const all = refs(MAX_REFS_PER_PART * 2 + 1);
    const parts = replayPlanParts({ ...input, objects: all });
    expect(parts.map(p => p.metadata.name)).toEqual(["p-1a2b-0", "p-1a2b-1", "p-1a2b-2"]);
    expect(parts.map(p => p.spec.part)).toEqual([
      { index: 0, count: 3 },
      { index: 1, count: 3 },
      { index: 2, count: 3 },
    ]);
    expect(new Set(parts.map(p => p.spec.digest)).size).toBe(1);
    expect(parts.flatMap(p => p.spec.objects)).toEqual(all);
  });

  it("still makes one part for an empty plan and refuses a bad id", () => {
    expect(replayPlanParts({ ...input, objects: [] })).toHaveLength(1);
    expect(() => replayPlanParts({ ...input, planId: "Bad_Id", objects: [] })).toThrow();
  });

  it("names parts and groups", () => {
    expect(partName("p", 0, 1)).toBe("p");
    expect(partName("p", 2, 3)).toBe("p-2");
    expect(groupOf("v1")).toBe("");
    expect(groupOf("apps/v1")).toBe("apps");
  });
});
