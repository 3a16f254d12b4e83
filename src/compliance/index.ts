export { CONTROLS, THREATS } from "./controls";
export { IMPLEMENTATIONS } from "./implementations";
export { mapControl, registerControls } from "./registry";
export { complianceReport, reportRows } from "./report";
export type {
  CodeRef,
  ComplianceReport,
  Control,
  ControlFamily,
  ControlImplementation,
  ControlReport,
  ControlStatus,
  TestRef,
} from "./types";
export { controlIdsIn, declaresTest, exportsSymbol, unresolvedReferences } from "./verify";
export type { SourceReader } from "./verify";
