import { buildCli } from "../../src/cli/main";

/**
 * Runs the krply CLI in this process and returns what it wrote to stdout. Failures reach the caller
 * as thrown errors (CliError with its exit code), as runCli would turn them into stderr and an exit code.
 */
export async function captureKrply(...args: string[]): Promise<string> {
  const chunks: string[] = [];
  const spy = jest.spyOn(process.stdout, "write").mockImplementation(chunk => {
    chunks.push(String(chunk));
    return true;
  });
  try {
    await buildCli()
      .exitOverride()
      .parseAsync(["node", "krply", ...args]);
  } finally {
    spy.mockRestore();
  }
  return chunks.join("");
}
