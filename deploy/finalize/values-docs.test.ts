import { describeValues, inlineRefs, undocumentedValues, withOpenMaps } from "./values-docs";

// Pepr's generated schema, in small: admission and watcher share one definition, as quicktype makes.
const schema = {
  $ref: "#/definitions/Values",
  definitions: {
    Values: {
      type: "object",
      additionalProperties: false,
      properties: {
        uuid: { type: "string" },
        admission: { $ref: "#/definitions/Controller" },
        watcher: { $ref: "#/definitions/Controller" },
      },
    },
    Controller: {
      type: "object",
      additionalProperties: false,
      properties: {
        image: { type: "string" },
        labels: {
          type: "object",
          additionalProperties: false,
          properties: { app: { type: "string" } },
        },
      },
    },
  },
};
const values = {
  uuid: "pepr-krply",
  admission: { image: "a", labels: { app: "x" } },
  watcher: { image: "w", labels: { app: "y", team: "sre" } },
};

describe("values documentation", () => {
  it("describes admission and watcher apart once shared definitions are inlined", () => {
    const described = describeValues(withOpenMaps(inlineRefs(schema)), {
      uuid: "u",
      admission: "a",
      "admission.image": "admission image",
      "admission.labels": "l",
      watcher: "w",
      "watcher.image": "watcher image",
      "watcher.labels": "l",
    }) as { properties: Record<string, { properties: Record<string, { description: string }> }> };
    expect(described.properties.admission.properties.image.description).toBe("admission image");
    expect(described.properties.watcher.properties.image.description).toBe("watcher image");
    expect(undocumentedValues(values, described)).toEqual([]);
  });

  it("names every value without a description, walking declared structure only", () => {
    const described = describeValues(withOpenMaps(inlineRefs(schema)), {
      uuid: "u",
      admission: "a",
      "admission.labels": "l",
      watcher: "w",
    });
    expect(undocumentedValues(values, described)).toEqual([
      "admission.image",
      "watcher.image",
      "watcher.labels",
    ]);
  });

  it("refuses to describe a value the schema does not have", () => {
    expect(() => describeValues(inlineRefs(schema), { "watcher.nope": "x" })).toThrow(
      /watcher.nope/,
    );
  });
});
