/**
 * Compliance as reporting (the pattern of Pepr's ADR on compliance): controls are registered once in
 * a typed registry, each is mapped to the code that implements it and the tests that prove it, and a
 * report aggregates every registered control, including the ones nothing implements yet.
 */

/** Where a control comes from in docs/threat-model.md, and the NIST SP 800-53 family it belongs to. */
export type ControlFamily =
  | "AC" // access control
  | "IA" // identification and authentication
  | "SC" // system and communications protection
  | "SI" // system and information integrity
  | "CM"; // configuration management

export interface Control {
  /** A stable id, written in docs/threat-model.md beside the threat it answers. */
  id: string;
  title: string;
  family: ControlFamily;
  /** The heading of docs/threat-model.md that explains the threat. */
  threat: string;
}

/** An exported symbol of a source file (a function, constant, class or type). */
export interface CodeRef {
  file: string;
  symbol: string;
}

/** A test, by its file and the exact name given to `it`/`test`. */
export interface TestRef {
  file: string;
  name: string;
}

/** How one piece of code meets (part of) a control. */
export interface ControlImplementation {
  control: string;
  description: string;
  code: readonly CodeRef[];
  tests: readonly TestRef[];
  /** The share of the control this implementation covers, in percent. */
  coverage: number;
}

export type ControlStatus = "covered" | "partial" | "no implementation" | "no test";

export interface ControlReport extends Control {
  status: ControlStatus;
  coverage: number;
  implementations: ControlImplementation[];
}

export interface ComplianceReport {
  controls: ControlReport[];
  /** Problems that make the report fail: unmapped controls, mappings to unknown controls. */
  problems: string[];
  ok: boolean;
}
