import { readFileSync } from "node:fs";
import { CONFIG_DOCS_PATH, configDocs } from "../../scripts/config-docs";
import { ConfigSchema } from "../../src/config";

describe("docs/config.md", () => {
  it("is what the config schema generates (run `npm run docs:config` after changing a setting)", () => {
    expect(readFileSync(CONFIG_DOCS_PATH, "utf8")).toBe(configDocs());
  });

  it("has one row per setting, each with its default and meaning", () => {
    const rows = configDocs()
      .split("\n")
      .filter(l => l.startsWith("| `KRPLY_"));
    expect(rows).toHaveLength(Object.keys(ConfigSchema.shape).length);
    expect(rows).toContainEqual(
      expect.stringMatching(/^\| `KRPLY_SNAPSHOT_AT` +\| `02:00` +\| Time of day/),
    );
  });
});
