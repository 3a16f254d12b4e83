// Generates docs/config.md from the config schema (`npm run docs:config`). test/unit/config-docs.test.ts
// regenerates it in memory and fails when the file is stale.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { ConfigSchema } from "../src/config";

export const CONFIG_DOCS_PATH = join(__dirname, "..", "docs", "config.md");

const intro = `# Configuration

<!-- Generated from src/config.ts by \`npm run docs:config\`. Edit the schema there, not this file. -->

krply reads its settings from environment variables. One zod schema, \`ConfigSchema\` in
[src/config.ts](../src/config.ts), parses, defaults and describes every one of them; this table is
generated from it, and the chart values will be too.

- In the cluster the variables come from \`pepr.env\` in package.json, which Pepr writes into the
  manifests of both deployments. That is why \`pepr.env\` repeats the default journal path: JSON has no
  comments to say so, and a unit test checks that every \`pepr.env\` value equals the default here.
- An empty value counts as unset.
- Invalid values give one error that names every bad variable with its value, for example
  \`KRPLY_SNAPSHOT_AT="25:00" is invalid: must be HH:MM (UTC)\`. The recorder then does not start and
  every scheduled snapshot run logs the error; the CLI stops with it.
- Only the watcher controller (\`PEPR_WATCH_MODE=true\`) and \`pepr dev\` record and take scheduled
  snapshots; the admission pods read no journal.
- Pepr needs the schedule's start time when the module loads, so the snapshot settings are read then.
  That never fails: with an invalid configuration the default schedule is registered, and each run
  logs the configuration error instead of taking a snapshot.
- The CLI reads the same variables; its \`--store\` defaults to \`KRPLY_JOURNAL\` when set and to
  \`./krply.db\` otherwise.
`;

interface Property {
  description?: string;
  default?: unknown;
}

const code = (s: string) => `\`${s}\``;
const cell = (s: string) => s.replace(/\|/g, "\\|");

/** A markdown table laid out the way Prettier lays it out, so the file passes `prettier --check`. */
function table(head: string[], rows: string[][]): string {
  const widths = head.map((h, i) => Math.max(3, h.length, ...rows.map(r => r[i].length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(" | ")} |`;
  return [line(head), line(widths.map(w => "-".repeat(w))), ...rows.map(line)].join("\n");
}

/** docs/config.md as the schema describes it now. */
export function configDocs(): string {
  const schema = z.toJSONSchema(ConfigSchema, { io: "input" }) as {
    properties: Record<string, Property>;
  };
  const rows = Object.entries(schema.properties).map(([name, p]) => [
    code(name),
    p.default === undefined ? "_unset_" : code(String(p.default)),
    cell(p.description ?? ""),
  ]);
  return `${intro}\n${table(["variable", "default", "meaning"], rows)}\n`;
}

if (require.main === module) {
  writeFileSync(CONFIG_DOCS_PATH, configDocs());
  console.log(`wrote ${CONFIG_DOCS_PATH}`);
}
