import { relist, watchStep } from "./crd-follower";

const crd = (name: string, rv = "1") => ({
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name, resourceVersion: rv },
});
const line = (type: string, object: unknown) => JSON.stringify({ type, object });
const names = (steps: { crd: unknown; phase: string }[]) =>
  steps.map(s => `${s.phase} ${(s.crd as { metadata: { name: string } }).metadata.name}`);

describe("relist", () => {
  it("hands over every listed CRD, then as deleted each known one the list no longer holds", () => {
    const known = new Map<string, unknown>([
      ["a.x", crd("a.x")],
      ["gone.x", crd("gone.x")],
    ]);
    const steps = relist(known, [crd("a.x", "2"), crd("new.x")]);
    expect(names(steps)).toEqual(["MODIFIED a.x", "MODIFIED new.x", "DELETED gone.x"]);
    // The deleted one is handed over as it was last known.
    expect(steps[2].crd).toEqual(crd("gone.x"));
    expect([...known.keys()].sort()).toEqual(["a.x", "new.x"]);
    expect(known.get("a.x")).toEqual(crd("a.x", "2"));
  });

  it("an empty list deletes everything known; a first list deletes nothing", () => {
    const known = new Map<string, unknown>();
    expect(names(relist(known, [crd("a.x")]))).toEqual(["MODIFIED a.x"]);
    expect(names(relist(known, []))).toEqual(["DELETED a.x"]);
    expect(known.size).toBe(0);
  });
});

describe("watchStep", () => {
  it("hands over added, modified and deleted CRDs and keeps what it knows in step", () => {
    const known = new Map<string, unknown>();
    expect(names([watchStep(known, line("ADDED", crd("a.x")))!])).toEqual(["ADDED a.x"]);
    expect(known.has("a.x")).toBe(true);
    expect(names([watchStep(known, line("MODIFIED", crd("a.x", "2")))!])).toEqual(["MODIFIED a.x"]);
    expect(known.get("a.x")).toEqual(crd("a.x", "2"));
    expect(names([watchStep(known, line("DELETED", crd("a.x", "3")))!])).toEqual(["DELETED a.x"]);
    expect(known.size).toBe(0);
  });

  it("skips bookmarks", () => {
    const known = new Map<string, unknown>();
    const bookmark = { kind: "CustomResourceDefinition", metadata: { resourceVersion: "9" } };
    expect(watchStep(known, line("BOOKMARK", bookmark))).toBeNull();
    expect(known.size).toBe(0);
  });

  it("throws on an ERROR event or a line it cannot parse, so the follower relists", () => {
    const known = new Map<string, unknown>([["a.x", crd("a.x")]]);
    const status = {
      kind: "Status",
      status: "Failure",
      message: "too old resource version",
      code: 410,
    };
    expect(() => watchStep(known, line("ERROR", status))).toThrow(/too old resource version/);
    expect(() => watchStep(known, "{not json")).toThrow(/CRD watch/);
    // What it knew stays for the relist to compare against.
    expect([...known.keys()]).toEqual(["a.x"]);
  });
});
