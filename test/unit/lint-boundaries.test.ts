import { spawnSync } from "node:child_process";
import { join } from "node:path";

const ROOT = join(__dirname, "..", "..");
const ESLINT = join(ROOT, "node_modules", "eslint", "bin", "eslint.js");

interface Message {
  ruleId: string | null;
  line: number;
  severity: number;
  message: string;
}

// The fixtures are left out of `npm run lint`; this lints them with the project's own config, in
// a child process because ESLint loads its flat config as an ES module.
function lint(file: string): Message[] {
  const run = spawnSync(
    process.execPath,
    [ESLINT, "--no-ignore", "--format", "json", join("test", "fixtures", "lint", file)],
    { cwd: ROOT, encoding: "utf8" },
  );
  if (run.error) throw run.error;
  const [result] = JSON.parse(run.stdout) as { messages: Message[] }[];
  return result.messages;
}

describe("front-door lint rule", () => {
  it("fails a file that reaches past a folder's index.ts", () => {
    const hits = lint("deep-import.ts").filter(m => m.ruleId === "no-restricted-imports");
    expect(hits.map(m => [m.line, m.severity])).toEqual([
      [2, 2],
      [3, 2],
    ]);
    expect(hits[0].message).toMatch(/import src\/journal through its index\.ts/);
    expect(hits[1].message).toMatch(/import src\/materialize through its index\.ts/);
  });

  it("passes a file that uses the front doors", () => {
    expect(lint("front-door.ts")).toEqual([]);
  });
});
