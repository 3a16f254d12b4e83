import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { describeChart } from "./chart-checks";
import { describeLifecycle } from "./helm-lifecycle";

const root = join(__dirname, "..", "..");
const dist = join(root, "dist");

describe("npm run build", () => {
  beforeAll(() => {
    // Offline by construction: pepr build only bundles with esbuild and renders templates.
    // pepr build type-checks the whole repository; on a loaded 2-core machine that alone takes minutes.
    execFileSync("npm", ["run", "build"], { cwd: root, stdio: "pipe", timeout: 840_000 });
  }, 900_000);

  it("produces the module bundle", () => {
    const bundle = join(dist, "pepr-krply.js");
    expect(statSync(bundle).size).toBeGreaterThan(10_000);
    expect(readFileSync(bundle, "utf8")).toContain("replay-gate");
  });

  it("produces the bundled krply CLI that bin/krply.js runs", () => {
    // krply.js is the small entry that runs the chunks (scripts/build-cli.mjs); main.js is the CLI.
    expect(statSync(join(dist, "cli", "krply.js")).isFile()).toBe(true);
    expect(statSync(join(dist, "cli", "chunks", "main.js")).size).toBeGreaterThan(10_000);
    const help = execFileSync(process.execPath, [join(root, "bin", "krply.js"), "--help"], {
      encoding: "utf8",
    });
    expect(help).toContain("record");
  });

  it("produces the query sidecar bundle, which loads neither pepr nor the kube client", () => {
    for (const f of ["main.js", "worker.js"]) {
      const text = readFileSync(join(dist, "api", f), "utf8");
      expect(text.length).toBeGreaterThan(10_000);
      expect(text).not.toMatch(
        /require\("(pepr|@kubernetes\/client-node|kubernetes-fluent-client)"\)/,
      );
      expect(text).not.toContain("node_modules/pepr/");
      // ASCII only: V8 keeps a script's source for as long as its functions live, two bytes a
      // character once one character is not Latin-1 (a name in a bundled licence or comment).
      expect(text).not.toMatch(/[\u0080-\uffff]/);
    }
  });

  it("produces a Helm chart with the admission webhook and the module secret", () => {
    const chart = join(dist, "krply-chart");
    for (const f of ["Chart.yaml", "values.yaml", "values.schema.json"]) {
      expect(existsSync(join(chart, f))).toBe(true);
    }
    expect(existsSync(join(chart, "templates", "validation-webhook.yaml"))).toBe(true);
    expect(existsSync(join(chart, "templates", "module-secret.yaml"))).toBe(true);
  });

  it("renders manifests whose validating webhook fails closed", () => {
    const docs = parseAllDocuments(readFileSync(join(dist, "pepr-module-krply.yaml"), "utf8")).map(
      d => d.toJS(),
    ) as { kind?: string; webhooks?: { failurePolicy: string; rules: unknown[] }[] }[];
    const vwc = docs.find(d => d?.kind === "ValidatingWebhookConfiguration");
    expect(vwc?.webhooks?.[0].failurePolicy).toBe("Fail");
    expect(vwc?.webhooks?.[0].rules.length).toBeGreaterThan(0);
  });

  describeChart(dist);
  describeLifecycle();
});
