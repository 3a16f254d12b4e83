import { streamIdOf } from "../event";
import { openJournal } from "../journal";
import { tempJournalPath } from "../../test/support/journal-fixtures";
import { cms, deploys, useScriptedJournal } from "../../test/support/materialize-fixtures";
import { kindMatches, kindOfStream, resolveCluster, resolveKind, soleStream } from "./resolve";

describe("resolve", () => {
  const h = useScriptedJournal();

  it("maps what people type to a recorded kind: short names, plurals, any case", () => {
    for (const typed of ["deploy", "deployments", "Deployment", "DEPLOYMENT"])
      expect(resolveKind(h.j, "c1", typed)).toBe("Deployment");
    for (const typed of ["cm", "configmaps", "configmap"])
      expect(resolveKind(h.j, "c1", typed)).toBe("ConfigMap");
    expect(() => resolveKind(h.j, "c1", "svc")).toThrow(
      'kind "svc" was never recorded in cluster c1 (have: ConfigMap, Deployment)',
    );
  });

  it("knows kubectl's plural rules and short names from the one alias table", () => {
    expect(kindMatches("NetworkPolicy", "netpol")).toBe(true);
    expect(kindMatches("NetworkPolicy", "networkpolicies")).toBe(true);
    expect(kindMatches("Ingress", "ingresses")).toBe(true);
    expect(kindMatches("Ingress", "ing")).toBe(true);
    expect(kindMatches("Endpoints", "ep")).toBe(true);
    expect(kindMatches("Pod", "svc")).toBe(false);
  });

  it("picks the only cluster, checks a named one and asks when there are several", () => {
    expect(resolveCluster(h.j, undefined)).toBe("c1");
    expect(resolveCluster(h.j, "c1")).toBe("c1");
    expect(() => resolveCluster(h.j, "c2")).toThrow(
      'cluster "c2" is not in the journal (have: c1)',
    );
    h.j.append({ records: [], checkpoints: [], streams: [{ ...cms, clusterId: "c2" }] });
    expect(() => resolveCluster(h.j, undefined)).toThrow(
      /several clusters \(c1, c2\); pass --cluster/,
    );
    const empty = tempJournalPath();
    const j = openJournal(empty.path);
    try {
      expect(() => resolveCluster(j, undefined)).toThrow(/has no recorded streams yet/);
    } finally {
      j.close();
      empty.cleanup();
    }
  });

  it("finds the kind and the one stream behind an object", () => {
    expect(kindOfStream(h.j, streamIdOf(deploys))).toBe("Deployment");
    expect(() => kindOfStream(h.j, "nope")).toThrow(/recorded no objects; pass a kind/);
    expect(soleStream(h.j, "c1", { kind: "ConfigMap", namespace: "shop", name: "cfg" })).toBe(
      streamIdOf(cms),
    );
    expect(() =>
      soleStream(h.j, "c1", { kind: "ConfigMap", namespace: "shop", name: "x" }),
    ).toThrow(/recorded on 0 streams, pass one/);
  });
});
