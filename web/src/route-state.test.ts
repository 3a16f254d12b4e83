import { hrefOf, parseHash, refOf, refParams, withParams } from "./route-state";

describe("URL state", () => {
  it("reads a view and its parameters from the hash; an empty hash is Coverage", () => {
    expect(parseHash("")).toEqual({ view: "coverage", params: {}, unknown: null });
    expect(parseHash("#/")).toEqual({ view: "coverage", params: {}, unknown: null });
    expect(parseHash("#/streams?stream=c1%2F-%2Fv1%2Fconfigmaps%2Fshop%2F-&cursor=abc")).toEqual({
      view: "streams",
      params: { stream: "c1/-/v1/configmaps/shop/-", cursor: "abc" },
      unknown: null,
    });
    expect(parseHash("#/search?name=&kind=cm").params).toEqual({ kind: "cm" });
  });

  it("names an unknown view instead of guessing", () => {
    expect(parseHash("#/nope?x=1")).toEqual({ view: "coverage", params: {}, unknown: "nope" });
  });

  it("writes hashes with sorted keys and no empty values, and round-trips them", () => {
    const h = hrefOf("streams", { stream: "a b/c", cursor: undefined, cluster: "", window: "60" });
    expect(h).toBe("#/streams?stream=a+b%2Fc&window=60");
    expect(parseHash(h).params).toEqual({ stream: "a b/c", window: "60" });
    expect(hrefOf("coverage")).toBe("#/coverage");
  });

  it("changes some parameters and removes others", () => {
    const s = parseHash("#/streams?stream=x&cursor=c1");
    expect(withParams(s, { cursor: "c2" })).toBe("#/streams?cursor=c2&stream=x");
    expect(withParams(s, { cursor: null })).toBe("#/streams?stream=x");
  });

  it("turns view parameters into an object ref and back", () => {
    expect(refOf({ kind: "cm" })).toBeNull();
    const r = refOf({ kind: "cm", name: "cfg", ns: "shop" });
    expect(r).toEqual({ kind: "cm", name: "cfg", namespace: "shop" });
    expect(refOf({ kind: "ns", name: "shop", cluster: "c1", group: "" })).toEqual({
      kind: "ns",
      name: "shop",
      namespace: "",
      cluster: "c1",
    });
    expect(refParams(r!)).toEqual({
      cluster: undefined,
      kind: "cm",
      name: "cfg",
      ns: "shop",
      group: undefined,
    });
  });
});
