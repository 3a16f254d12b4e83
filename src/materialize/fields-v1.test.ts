import { ownership, parseFieldsV1, parseFieldsV1Key } from "./fields-v1";

const deployment = {
  spec: {
    replicas: 3,
    selector: { matchLabels: { app: "web" } },
    template: {
      spec: {
        containers: [
          { name: "web", image: "nginx:1", ports: [{ containerPort: 80, protocol: "TCP" }] },
        ],
      },
    },
  },
  metadata: { finalizers: ["a.example/x"] },
};

const fields = parseFieldsV1({
  "f:metadata": { "f:finalizers": { ".": {}, 'v:"a.example/x"': {} } },
  "f:spec": {
    "f:replicas": {},
    "f:selector": {},
    "f:template": {
      "f:spec": {
        "f:containers": {
          'k:{"name":"web"}': {
            ".": {},
            "f:image": {},
            "f:ports": {
              'k:{"containerPort":80,"protocol":"TCP"}': { ".": {}, "f:containerPort": {} },
            },
          },
        },
      },
    },
  },
});

describe("FieldsV1", () => {
  it("parses every key form", () => {
    expect(parseFieldsV1Key("f:spec")).toEqual({ kind: "field", name: "spec" });
    expect(parseFieldsV1Key('k:{"name":"web"}')).toEqual({ kind: "key", fields: { name: "web" } });
    expect(parseFieldsV1Key('v:"x"')).toEqual({ kind: "value", value: "x" });
    expect(parseFieldsV1Key("i:2")).toEqual({ kind: "index", index: 2 });
    expect(parseFieldsV1Key(".")).toEqual({ kind: "self" });
    expect(parseFieldsV1Key("f:a.b:c")).toEqual({ kind: "field", name: "a.b:c" });
  });

  it("rejects malformed keys with the key in the message", () => {
    expect(() => parseFieldsV1Key("k:{bad")).toThrow(/malformed FieldsV1 key "k:\{bad"/);
    expect(() => parseFieldsV1Key("x:1")).toThrow(/unknown FieldsV1 key/);
    expect(() => parseFieldsV1Key("i:-1")).toThrow(/malformed/);
  });

  it("finds exact ownership through field, key and value steps", () => {
    expect(ownership(fields, ["spec", "replicas"], deployment)).toBe("exact");
    const image = [
      "spec",
      "template",
      "spec",
      "containers",
      { key: "name", value: "web" },
      "image",
    ];
    expect(ownership(fields, image, deployment)).toBe("exact");
    const port = [
      "spec",
      "template",
      "spec",
      "containers",
      { key: "name", value: "web" },
      "ports",
      { key: "containerPort", value: 80 },
      "containerPort",
    ];
    expect(ownership(fields, port, deployment)).toBe("exact");
    expect(ownership(fields, ["metadata", "finalizers", 0], deployment)).toBe("exact");
  });

  it("treats a leaf as owning everything below it (atomic fields)", () => {
    expect(ownership(fields, ["spec", "selector", "matchLabels", "app"], deployment)).toBe(
      "ancestor",
    );
  });

  it("reports parts owned below a path, and nothing for unowned fields", () => {
    expect(ownership(fields, ["spec", "template"], deployment)).toBe("descendant");
    expect(ownership(fields, ["spec", "paused"], deployment)).toBe("none");
    const other = ["spec", "template", "spec", "containers", { key: "name", value: "x" }];
    expect(ownership(fields, other, deployment)).toBe("none");
  });
});
