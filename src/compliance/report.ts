import type {
  ComplianceReport,
  Control,
  ControlImplementation,
  ControlReport,
  ControlStatus,
} from "./types";

function statusOf(impls: readonly ControlImplementation[], coverage: number): ControlStatus {
  if (impls.length === 0 || impls.every(i => i.code.length === 0)) return "no implementation";
  if (impls.every(i => i.tests.length === 0)) return "no test";
  return coverage >= 100 ? "covered" : "partial";
}

/**
 * Aggregates every registered control with what implements it. A control with no implementation or
 * no test, and a mapping to a control nobody registered, make the report fail; partial coverage is
 * reported as partial, not as a failure, so an honest 60% stays visible instead of being rounded up.
 */
export function complianceReport(
  controls: Readonly<Record<string, Control>>,
  implementations: readonly ControlImplementation[],
): ComplianceReport {
  const registered = Object.values(controls);
  const ids = new Set(registered.map(c => c.id));
  const problems: string[] = [];
  for (const impl of implementations) {
    if (!ids.has(impl.control)) {
      problems.push(`a mapping names ${impl.control}, which is not a registered control`);
    }
  }
  const reports: ControlReport[] = registered
    .map(control => {
      const impls = implementations.filter(i => i.control === control.id);
      const coverage = Math.min(
        100,
        impls.reduce((sum, i) => sum + i.coverage, 0),
      );
      const status = statusOf(impls, coverage);
      if (status === "no implementation" || status === "no test") {
        problems.push(`${control.id} (${control.title}) has ${status}`);
      }
      return { ...control, status, coverage, implementations: impls };
    })
    .sort((a, b) => a.id.localeCompare(b.id, "en", { numeric: true }));
  return { controls: reports, problems, ok: problems.length === 0 };
}

/** The report as rows for a table: one line per control. */
export function reportRows(report: ComplianceReport): string[][] {
  return report.controls.map(c => [
    c.id,
    c.status,
    `${c.coverage}%`,
    String(c.implementations.reduce((n, i) => n + i.code.length, 0)),
    String(c.implementations.reduce((n, i) => n + i.tests.length, 0)),
    c.title,
  ]);
}
