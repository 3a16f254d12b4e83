import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import {
  CONTROLS,
  IMPLEMENTATIONS,
  THREATS,
  complianceReport,
  controlIdsIn,
  declaresTest,
  exportsSymbol,
  mapControl,
  registerControls,
  unresolvedReferences,
} from ".";

const root = join(__dirname, "..", "..");
const readSource = (file: string): string | null => {
  const path = join(root, file);
  return existsSync(path) ? readFileSync(path, "utf8") : null;
};
const threatModel = readFileSync(join(root, "docs", "threat-model.md"), "utf8");

describe("krply's compliance registry (fails CI on a control with no implementation or no test)", () => {
  it("maps every registered control to code and tests", () => {
    const report = complianceReport(CONTROLS, IMPLEMENTATIONS);
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.controls.length).toBe(Object.keys(CONTROLS).length);
  });

  it("resolves every reference: each file exists, exports the symbol, and declares the test", () => {
    expect(unresolvedReferences(IMPLEMENTATIONS, readSource)).toEqual([]);
  });

  it("registers exactly the controls docs/threat-model.md names, under headings it has", () => {
    const registered = Object.values(CONTROLS)
      .map(c => c.id)
      .sort();
    expect(controlIdsIn(threatModel)).toEqual(registered);
    for (const heading of Object.values(THREATS)) {
      expect(threatModel).toContain(`## ${heading}\n`);
    }
  });
});

describe("the report", () => {
  const controls = registerControls({
    A: { id: "KR-T-1", title: "a", family: "AC", threat: "t" },
    B: { id: "KR-T-2", title: "b", family: "SC", threat: "t" },
    C: { id: "KR-T-10", title: "c", family: "SI", threat: "t" },
  });
  const code = [{ file: "x.ts", symbol: "x" }];
  const tests = [{ file: "x.test.ts", name: "x" }];

  it("lists controls nothing implements or tests, and fails", () => {
    const report = complianceReport(controls, [
      mapControl(controls.A, { description: "", code, tests }),
      mapControl(controls.B, { description: "", code, tests: [] }),
    ]);
    expect(report.ok).toBe(false);
    expect(report.controls.map(c => [c.id, c.status])).toEqual([
      ["KR-T-1", "covered"],
      ["KR-T-2", "no test"],
      ["KR-T-10", "no implementation"],
    ]);
    expect(report.problems).toEqual([
      "KR-T-2 (b) has no test",
      "KR-T-10 (c) has no implementation",
    ]);
  });

  it("adds up partial coverage without rounding it up, and caps it at 100", () => {
    const report = complianceReport(controls, [
      mapControl(controls.A, { description: "", code, tests, coverage: 40 }),
      mapControl(controls.A, { description: "", code, tests, coverage: 20 }),
      mapControl(controls.B, { description: "", code, tests, coverage: 70 }),
      mapControl(controls.B, { description: "", code, tests, coverage: 70 }),
      mapControl(controls.C, { description: "", code, tests }),
    ]);
    expect(report.ok).toBe(true);
    expect(report.controls.map(c => [c.status, c.coverage])).toEqual([
      ["partial", 60],
      ["covered", 100],
      ["covered", 100],
    ]);
  });

  it("refuses a mapping to a control that is not registered, a duplicate id and a bad coverage", () => {
    const stray = { id: "KR-T-9", title: "stray", family: "AC" as const, threat: "t" };
    const report = complianceReport(controls, [
      mapControl(stray, { description: "", code, tests }),
    ]);
    expect(report.problems[0]).toBe("a mapping names KR-T-9, which is not a registered control");
    expect(() =>
      registerControls({
        A: { id: "KR-T-1", title: "a", family: "AC", threat: "t" },
        B: { id: "KR-T-1", title: "b", family: "AC", threat: "t" },
      }),
    ).toThrow("control KR-T-1 is registered twice");
    expect(() => mapControl(controls.A, { description: "", code, tests, coverage: 0 })).toThrow(
      "coverage 0 is not in (0, 100]",
    );
  });
});

describe("reference resolution", () => {
  it("finds exported declarations and export lists, not mentions", () => {
    const text = [
      "export async function alpha() {}",
      "export const beta = 1;",
      "export { gamma, delta as epsilon };",
      "// zeta is only mentioned",
      "function eta() {}",
    ].join("\n");
    for (const s of ["alpha", "beta", "gamma", "delta"]) expect(exportsSymbol(text, s)).toBe(true);
    for (const s of ["zeta", "eta", "alph"]) expect(exportsSymbol(text, s)).toBe(false);
  });

  it("finds a test by its exact name, and an it.each name after its placeholder", () => {
    const text = `it("does a thing", () => {});\nit.each(xs)("%s never fails", () => {});`;
    expect(declaresTest(text, "does a thing")).toBe(true);
    expect(declaresTest(text, "never fails")).toBe(true);
    expect(declaresTest(text, "does a")).toBe(false);
  });

  it("names the control behind each reference that points at nothing", () => {
    const impl = mapControl(CONTROLS.API_CORS, {
      description: "",
      code: [
        { file: "gone.ts", symbol: "x" },
        { file: "here.ts", symbol: "missing" },
      ],
      tests: [{ file: "here.ts", name: "renamed" }],
    });
    const read = (f: string) => (f === "here.ts" ? "export const present = 1;" : null);
    expect(unresolvedReferences([impl], read)).toEqual([
      "KR-API-5: gone.ts does not exist",
      "KR-API-5: here.ts does not export missing",
      'KR-API-5: here.ts has no test named "renamed"',
    ]);
  });
});
