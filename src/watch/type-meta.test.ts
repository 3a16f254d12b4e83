import { apiVersionOf, withTypeMeta } from "./type-meta";

describe("withTypeMeta", () => {
  it("gives a list item the kind and apiVersion a watch event carries, and leaves a watch object as is", () => {
    const listItem = { metadata: { name: "a", resourceVersion: "1" }, data: { k: "v" } };
    const fromList = withTypeMeta(listItem, "v1", "ConfigMap");
    expect(fromList).toEqual({ apiVersion: "v1", kind: "ConfigMap", ...listItem });
    expect(Object.keys(fromList).slice(0, 2)).toEqual(["apiVersion", "kind"]);
    const fromWatch = { apiVersion: "v1", kind: "ConfigMap", ...listItem };
    expect(withTypeMeta(fromWatch, "v1", "ConfigMap")).toBe(fromWatch);
  });

  it("spells apiVersion as the API does", () => {
    expect(apiVersionOf({ group: "", version: "v1" })).toBe("v1");
    expect(apiVersionOf({ group: "apps", version: "v1" })).toBe("apps/v1");
  });
});
