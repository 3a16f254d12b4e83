import { buildCli, commandOf } from "./main";
import { rootProgram } from "./program";

const ALL = [
  "timeline",
  "reconstruct",
  "diff",
  "snapshot",
  "search",
  "export",
  "coverage",
  "status",
  "fsck",
  "backup",
  "record",
  "who",
  "replay",
  "compliance",
];

const names = (argv?: string[]) => buildCli(argv).commands.map(c => c.name());

describe("buildCli", () => {
  it("declares every command when argv names none of them, in the order help lists them", () => {
    expect(names()).toEqual(ALL);
    for (const argv of [[], ["--help"], ["help", "timeline"], ["timelin"], ["--store", "x"]])
      expect(names(["node", "krply", ...argv])).toEqual(ALL);
  });

  it("declares only the command argv names, whatever root options come first", () => {
    for (const name of ALL) expect(names(["node", "krply", name, "--help"])).toEqual([name]);
    expect(names(["node", "krply", "-o", "json", "--store", "status", "timeline", "x/y"])).toEqual([
      "timeline",
    ]);
    expect(names(["node", "krply", "--output=yaml", "coverage"])).toEqual(["coverage"]);
  });
});

describe("commandOf", () => {
  it("skips the value of each root option that takes one", () => {
    const root = rootProgram();
    expect(commandOf(["node", "krply", "--token", "status", "search", "web"], root)).toBe("search");
    expect(commandOf(["node", "krply", "--server", "http://x", "who"], root)).toBe("who");
    expect(commandOf(["node", "krply", "--", "timeline"], root)).toBeUndefined();
    expect(commandOf(["node", "krply", "nonsense", "timeline"], root)).toBeUndefined();
  });
});
