// Benchmarks run on shared, noisy machines, so each one measures its own baseline in-process and prints a ratio.
import { readdirSync } from "node:fs";
import { join } from "node:path";

interface BenchModule {
  main(args: string[]): Promise<void>;
}

async function run(): Promise<void> {
  const [only, ...rest] = process.argv.slice(2);
  const available = readdirSync(__dirname)
    .filter(
      f => f.endsWith(".ts") && f !== "run.ts" && !f.endsWith(".test.ts") && !f.startsWith("lib-"),
    )
    .map(f => f.replace(/\.ts$/, ""));
  const selected = only ? available.filter(n => n === only) : available;
  if (selected.length === 0) {
    throw new Error(`unknown benchmark "${only}"; available: ${available.join(", ")}`);
  }
  for (const name of selected) {
    console.log(`\n=== bench ${name} ===`);
    const mod = (await import(join(__dirname, `${name}.ts`))) as BenchModule;
    await mod.main(rest);
  }
}

run().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
