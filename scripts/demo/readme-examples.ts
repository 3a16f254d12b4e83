// The README's CLI examples from a real recording: the demo's shop recorded into a fresh journal on a
// fresh local API server, then each README example run against it. `npm run docs:examples` writes them
// into README.md; test/integration/readme-examples.test.ts runs the same and compares.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startApiServer } from "../../test/apiserver";
import { ShopWriter } from "./cluster";
import { README_EXAMPLES, buildCli, commandLine, runExample } from "./examples";
import { recordShop } from "./record";
import type { Example } from "./readme";

const root = resolve(__dirname, "..", "..");
const STORE = "krply-demo.db";

/** Records the shop (with its gap) and returns each README example with the CLI's real output. */
export async function generateExamples(say: (line: string) => void = () => {}): Promise<Example[]> {
  const work = mkdtempSync(join(tmpdir(), "krply-docs-examples-"));
  const cliDir = join(root, ".cache", `docs-examples-cli-${process.pid}`);
  const server = await startApiServer({ dataDir: join(work, "apiserver") });
  let writer: ShopWriter | undefined;
  try {
    writer = await ShopWriter.open(server.kubeconfigs.admin);
    const recording = await recordShop(
      {
        journalPath: join(work, STORE),
        recorderKubeconfig: server.kubeconfigs.recorder,
        writer,
        compact: () => server.compact(),
      },
      say,
    );
    await recording.recorder.stop();
    const runner = buildCli(root, cliDir);
    return README_EXAMPLES.map(args => {
      const res = runExample(runner, work, STORE, args);
      if (res.status !== 0) throw new Error(`${commandLine(STORE, args)} failed: ${res.text}`);
      return { command: commandLine(STORE, args), output: res.text };
    });
  } finally {
    await writer?.close();
    await server.dispose();
    rmSync(cliDir, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  }
}
