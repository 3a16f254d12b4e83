import { withModuleValue } from "./module-value";

const pepr = `apiVersion: v1
data:
  module-abc123.js.gz: >-
    H4sIAAAA
    BBBBCCCC==
kind: Secret
metadata:
  name: pepr-krply-module
  namespace: pepr-system
type: Opaque
`;

describe("the module bundle as a chart value", () => {
  it("takes the key and the folded data out of the template, leaving a reference", () => {
    const out = withModuleValue(pepr);
    expect(out.key).toBe("module-abc123.js.gz");
    expect(out.data).toBe("H4sIAAAABBBBCCCC==");
    expect(out.template).toContain("  {{ .Values.module.key }}: {{ .Values.module.data }}\n");
    expect(out.template).toContain("name: pepr-krply-module");
    expect(out.template).not.toContain("H4sI");
  });

  it("refuses a template of another shape, so a Pepr change is noticed", () => {
    expect(() => withModuleValue("apiVersion: v1\nkind: Secret\n")).toThrow(/module-secret.yaml/);
  });
});
