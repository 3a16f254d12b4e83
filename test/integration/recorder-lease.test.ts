// Two recorders never write one journal: the second `krply record` on a file refuses clearly.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { sharedApiServer } from "../apiserver/shared";
import { buildTools, type BuiltTools } from "../support/built-cli";
import { tempJournalPath } from "../support/journal-fixtures";

const api = sharedApiServer();
let tools: BuiltTools;
const tmp = tempJournalPath("krply-lease-it-");

beforeAll(() => {
  tools = buildTools();
});
afterAll(() => {
  tools?.cleanup();
  tmp.cleanup();
});

const recordArgs = () => [
  "--store",
  tmp.path,
  "record",
  "--kubeconfig",
  api.kubeconfigs.recorder,
  "-r",
  "cm",
  "-n",
  "default",
];

/** Starts `krply record` and resolves once it says it is recording. */
async function startRecording(): Promise<ChildProcess> {
  const child = spawn(process.execPath, [join(tools.binDir, "krply"), ...recordArgs()], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  await new Promise<void>((resolve, reject) => {
    child.stderr!.on("data", (d: Buffer) => {
      stderr += d.toString();
      if (stderr.includes("recording ")) resolve();
    });
    child.on("exit", code => reject(new Error(`krply record exited ${code}: ${stderr}`)));
  });
  return child;
}

async function stop(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode;
  const exited = new Promise<number | null>(r => child.on("exit", code => r(code)));
  child.kill("SIGTERM");
  return exited;
}

it("a second krply record on the same journal exits 5 naming the first; after the first stops, it records", async () => {
  const first = await startRecording();
  try {
    expect(existsSync(tmp.path)).toBe(true);
    const second = tools.krply(recordArgs());
    expect(second.status).toBe(5);
    const lines = second.stderr.trimEnd().split("\n");
    expect(lines.at(-1)).toMatch(
      new RegExp(`^krply: .*another recorder \\(.+, pid ${first.pid}\\) is writing this journal`),
    );
    expect(second.stderr).not.toMatch(/\n\s+at /);
  } finally {
    expect(await stop(first)).toBe(0);
  }
  // The first released its lease on the way out, so the next one starts at once.
  const next = await startRecording();
  expect(await stop(next)).toBe(0);
});
