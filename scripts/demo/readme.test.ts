import { BEGIN, END, maskVolatile, parseExamples, replaceExamples } from "./readme";

const examples = [
  { command: "krply --store krply-demo.db search web", output: "KIND  NAME\nService  web" },
  { command: "krply --store krply-demo.db who", output: "ACTOR\n\nafter a blank line" },
];

describe("the README examples block", () => {
  it("round-trips through README text and leaves the rest alone", () => {
    const readme = `# krply\n\nbefore\n\n${BEGIN}\nold\n${END}\n\nafter\n`;
    const next = replaceExamples(readme, examples);
    expect(next.startsWith("# krply\n\nbefore\n\n")).toBe(true);
    expect(next.endsWith(`${END}\n\nafter\n`)).toBe(true);
    expect(parseExamples(next)).toEqual(examples);
  });

  it("refuses a README without the markers", () => {
    expect(() => parseExamples("# krply\n")).toThrow(/no <!-- cli-examples:begin/);
  });
});

describe("maskVolatile", () => {
  it("masks times, cluster ids and resourceVersions, and nothing a workload decides", () => {
    const a =
      "2026-12-01T21:08:28.336Z  225  ADDED  apps/v1/deployments/shop/-  shop-admin (Update 2026-12-01T21:08:28Z)  nginx:1.27";
    const b =
      "2026-12-02T09:00:01.001Z  1225  ADDED  apps/v1/deployments/shop/-  shop-admin (Update 2026-12-02T09:00:01Z)  nginx:1.27";
    expect(maskVolatile(a)).toBe(maskVolatile(b));
    expect(maskVolatile(a)).toContain("nginx:1.27");
    expect(maskVolatile("x  MODIFIED")).not.toBe(maskVolatile("x  DELETED"));
    expect(
      maskVolatile("stream 127.0.0.1%3A33799~7508c331-517f-4449-bd22-31e79580d86f/-/v1/configmaps"),
    ).toBe("stream <cluster>/-/v1/configmaps");
    expect(maskVolatile("GAPS 1 (0 open)")).toBe("GAPS 1 (0 open)");
  });
});
