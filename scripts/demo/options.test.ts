import { buildProgressLine, isHarnessServer, parseDemoArgs } from "./options";

describe("parseDemoArgs", () => {
  it("defaults to ./krply-demo.db, port 8484, the module on and a 3 s probe", () => {
    expect(parseDemoArgs([])).toEqual({
      help: false,
      journal: "krply-demo.db",
      apiPort: 8484,
      module: true,
      kubeconfig: undefined,
      context: undefined,
      probeTimeoutMs: 3000,
    });
  });

  it("takes every flag", () => {
    expect(
      parseDemoArgs([
        "--journal",
        "/tmp/x.db",
        "--api-port",
        "0",
        "--no-module",
        "--kubeconfig",
        "/k",
        "--context",
        "c",
        "--probe-timeout-ms",
        "500",
      ]),
    ).toEqual({
      help: false,
      journal: "/tmp/x.db",
      apiPort: 0,
      module: false,
      kubeconfig: "/k",
      context: "c",
      probeTimeoutMs: 500,
    });
  });

  it("asks for help with -h or --help", () => {
    expect(parseDemoArgs(["-h"]).help).toBe(true);
    expect(parseDemoArgs(["--help"]).help).toBe(true);
  });

  it("refuses an unknown flag or a bad port with the usage, not a stack trace", () => {
    expect(() => parseDemoArgs(["--nope"])).toThrow(
      /Unknown option '--nope'[\s\S]*usage: npm run demo/,
    );
    expect(() => parseDemoArgs(["--api-port", "70000"])).toThrow(/^--apiPort: .*\nusage:/);
    expect(() => parseDemoArgs(["--api-port", "x"])).toThrow(/--apiPort/);
  });
});

describe("buildProgressLine", () => {
  it("counts minutes and seconds and says how long a cold build takes", () => {
    expect(buildProgressLine(0)).toContain("0m00s so far");
    expect(buildProgressLine(125_400)).toContain("2m05s so far");
    expect(buildProgressLine(0)).toContain("up to ~30 min");
  });
});

describe("isHarnessServer", () => {
  it("matches the harness's own URL only, ignoring a trailing slash", () => {
    expect(isHarnessServer("https://127.0.0.1:6443/", "https://127.0.0.1:6443")).toBe(true);
    expect(isHarnessServer("https://127.0.0.1:6443", "https://127.0.0.1:6444")).toBe(false);
    expect(isHarnessServer("https://prod.example:443", undefined)).toBe(false);
  });
});
