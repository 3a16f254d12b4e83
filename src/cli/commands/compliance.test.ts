import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { captureKrply } from "../../../test/support/cli-capture";
import { CONTROLS } from "../../compliance";
import { CliError, EXIT } from "../errors";

const root = join(__dirname, "..", "..", "..");

describe("krply compliance", () => {
  it("prints one line per registered control, every one covered", async () => {
    const text = await captureKrply("compliance");
    const lines = text.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^ID\s+STATUS\s+COVERAGE\s+CODE\s+TESTS\s+CONTROL$/);
    expect(lines.slice(1).map(l => l.split(/\s+/)[0])).toEqual(
      Object.values(CONTROLS)
        .map(c => c.id)
        .sort((a, b) => a.localeCompare(b, "en", { numeric: true })),
    );
    for (const line of lines.slice(1)) expect(line).toMatch(/^KR-\S+\s+covered\s+100%\s+[1-9]/);
  });

  it("verifies every reference against this checkout, and shows one control with its tests as JSON", async () => {
    const json = JSON.parse(
      await captureKrply("-o", "json", "compliance", "--verify", root, "--control", "KR-GATE-1"),
    );
    expect(json.data.ok).toBe(true);
    expect(json.data.problems).toEqual([]);
    expect(json.data.controls).toHaveLength(1);
    const tests = json.data.controls[0].implementations.flatMap(
      (i: { tests: { name: string }[] }) => i.tests.map(t => t.name),
    );
    expect(tests).toContain("never sends an unlabelled write to krply");
  });

  it("fails with a clear line for an unknown control or a directory that is not a checkout", async () => {
    await expect(captureKrply("compliance", "--control", "KR-NOPE-1")).rejects.toMatchObject({
      exitCode: EXIT.NOT_FOUND,
      message: "no control KR-NOPE-1; see krply compliance",
    });
    const empty = mkdtempSync(join(tmpdir(), "krply-compliance-"));
    try {
      const err = await captureKrply("compliance", "--verify", empty).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(CliError);
      expect((err as CliError).exitCode).toBe(EXIT.USAGE);
      expect((err as CliError).message).toContain("is not a krply source checkout");
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
