// README's "CLI examples" are real output: the same workload is recorded again here, on an API server
// of its own (other tests write to the shared one's "shop" namespace), and every example must print
// what README shows, up to times, resourceVersions and the cluster id. On a mismatch, run
// `npm run docs:examples` and review the README diff.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { generateExamples } from "../../scripts/demo/readme-examples";
import { maskVolatile, parseExamples } from "../../scripts/demo/readme";

jest.setTimeout(300_000);

describe("README CLI examples", () => {
  it("match what the CLI prints for a fresh recording of the demo shop", async () => {
    const readme = parseExamples(readFileSync(join(__dirname, "..", "..", "README.md"), "utf8"));
    const fresh = await generateExamples();
    expect(readme.map(e => e.command)).toEqual(fresh.map(e => e.command));
    for (const [i, e] of fresh.entries()) {
      expect(`$ ${e.command}\n${maskVolatile(readme[i].output)}`).toBe(
        `$ ${e.command}\n${maskVolatile(e.output)}`,
      );
    }
  });
});
