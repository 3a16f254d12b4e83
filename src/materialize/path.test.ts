import fc from "fast-check";
import { escapeKey, formatPath, parsePath, type PathSegment } from "./path";

describe("path", () => {
  it("escapes dots and brackets inside keys", () => {
    expect(escapeKey("app.kubernetes.io/name")).toBe("app\\.kubernetes\\.io/name");
    expect(formatPath(["metadata", "labels", "app.kubernetes.io/name"])).toBe(
      "metadata.labels.app\\.kubernetes\\.io/name",
    );
    expect(formatPath(["data", "a[0]"])).toBe("data.a\\[0\\]");
  });

  it("prints list steps by index and by key", () => {
    expect(formatPath(["spec", "containers", { key: "name", value: "app" }, "env", 0])).toBe(
      "spec.containers[name=app].env[0]",
    );
    expect(formatPath(["ports", { key: "containerPort", value: 80 }])).toBe(
      "ports[containerPort=80]",
    );
    expect(formatPath(["ports", { key: "name", value: "80" }])).toBe('ports[name="80"]');
  });

  it("parses what it prints, for any keys and selector values", () => {
    const key = fc.string({ minLength: 1 });
    const seg: fc.Arbitrary<PathSegment> = fc.oneof(
      key,
      fc.nat(),
      fc.record({
        key,
        value: fc.oneof(fc.string(), fc.integer(), fc.boolean()),
      }),
    );
    fc.assert(
      fc.property(key, fc.array(seg), (first, rest) => {
        const segs = [first, ...rest];
        expect(parsePath(formatPath(segs))).toEqual(segs);
      }),
    );
  });

  it("rejects malformed paths", () => {
    expect(() => parsePath("a[x]")).toThrow(/not a number/);
    expect(() => parsePath("a[name=b")).toThrow(/unclosed/);
    expect(() => parsePath("a\\")).toThrow(/backslash/);
  });
});
