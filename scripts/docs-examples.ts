// `npm run docs:examples`: writes the real output of the README's CLI examples into README.md (see
// scripts/demo/readme-examples.ts). The recorder's warnings (the demo's 410) would bury the progress
// lines, so only errors are logged; set before anything that creates a logger loads.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

process.env.KRPLY_LOG_LEVEL ??= "error";

async function main(): Promise<void> {
  const { generateExamples } = await import("./demo/readme-examples");
  const { replaceExamples } = await import("./demo/readme");
  const examples = await generateExamples(line => process.stdout.write(`${line}\n`));
  const path = join(__dirname, "..", "README.md");
  writeFileSync(path, replaceExamples(readFileSync(path, "utf8"), examples));
  process.stdout.write(`wrote ${examples.length} CLI examples into README.md\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`docs:examples: ${(err as Error).message}\n`);
  process.exit(1);
});
