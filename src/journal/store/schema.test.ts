import { RECORD_TYPES, WATCH_TYPES } from "../../event";
import { TYPE_CODES, WATCH_CODES } from "./schema";

// The stored codes are positions in append-only lists; the wire format lists the same names.
describe("stored type codes", () => {
  it("cover exactly the record types of the wire format", () => {
    expect([...TYPE_CODES].sort()).toEqual([...RECORD_TYPES].sort());
  });

  it("cover exactly the watch types of the wire format", () => {
    expect([...WATCH_CODES].sort()).toEqual([...WATCH_TYPES].sort());
  });

  it("keep the codes already written to journals (positions never move)", () => {
    expect(TYPE_CODES.slice(0, 8)).toEqual([
      "event",
      "baseline",
      "gap",
      "coverage_change",
      "audit_correlation",
      "snapshot",
      "checkpoint",
      "pruned",
    ]);
    expect(WATCH_CODES.slice(0, 5)).toEqual(["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"]);
  });
});
