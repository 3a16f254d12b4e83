import { auditLine } from "../../test/support/audit-fixtures";
import { parseAuditLine } from "./facts";

describe("parseAuditLine", () => {
  it("keeps ids and actor but no body, even when a Secret's line carries one", () => {
    const line = auditLine({
      auditId: "s-1",
      verb: "update",
      user: "alice",
      resource: "secrets",
      namespace: "shop",
      name: "db",
      request: { kind: "Secret", data: { password: "aHVudGVyMg==" } },
      response: {
        kind: "Secret",
        metadata: { name: "db", namespace: "shop", uid: "u-s", resourceVersion: "7" },
        data: { password: "aHVudGVyMg==" },
      } as never,
      at: "2026-01-01T00:00:00Z",
    });
    const p = parseAuditLine(line, 1 << 20);
    expect(p.ok).toBe(true);
    if (!p.ok) return;
    expect(p.facts).toMatchObject({
      kind: "Secret",
      uid: "u-s",
      resourceVersion: "7",
      user: "alice",
    });
    expect(JSON.stringify(p.facts)).not.toContain("aHVudGVyMg");
  });

  it("refuses a line over the bound before parsing it", () => {
    expect(parseAuditLine(`{"x":"${"y".repeat(100)}"}`, 50)).toEqual({ ok: false, reason: "huge" });
  });

  it("refuses malformed JSON and events missing required fields", () => {
    expect(parseAuditLine("{", 100)).toEqual({ ok: false, reason: "malformed" });
    expect(parseAuditLine('{"kind":"Event"}', 100)).toEqual({ ok: false, reason: "malformed" });
  });
});
